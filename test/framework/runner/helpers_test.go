package runner

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// createRunnerTestObjects creates the test namespace, the whoami
// ServiceAccount, the whoami-files ConfigMap and a Role letting the whoami and
// late-sa ServiceAccounts write ConfigMaps.
func createRunnerTestObjects(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: runnerTestNS} }
	createOrExists(t, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runnerTestNS}}, metav1.CreateOptions{})
		return err
	})
	createOrExists(t, func() error {
		_, err := cs.CoreV1().ServiceAccounts(runnerTestNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("whoami")}, metav1.CreateOptions{})
		return err
	})
	createOrExists(t, func() error {
		_, err := cs.CoreV1().ConfigMaps(runnerTestNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("whoami-files"),
			Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{})
		return err
	})
	createOrExists(t, func() error {
		_, err := cs.RbacV1().Roles(runnerTestNS).Create(ctx, &rbacv1.Role{ObjectMeta: meta("configmap-writer"),
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}}},
		}, metav1.CreateOptions{})
		return err
	})
	createOrExists(t, func() error {
		_, err := cs.RbacV1().RoleBindings(runnerTestNS).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("configmap-writer"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-writer"},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.ServiceAccountKind, Namespace: runnerTestNS, Name: "whoami"},
				{Kind: rbacv1.ServiceAccountKind, Namespace: runnerTestNS, Name: "late-sa"},
			},
		}, metav1.CreateOptions{})
		return err
	})
}

// whoamiDeployment returns a Deployment labeled for the Runner that runs the
// whoami helper as ServiceAccount sa, reporting into ConfigMap report.
func whoamiDeployment(name, sa, report string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: runnerTestNS,
			Labels: map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: sa,
					Containers: []corev1.Container{{
						Name:    "whoami",
						Image:   "example.com/whoami:v1",
						Command: []string{"/whoami", "--tag=v1"},
						Args:    []string{"--file=/etc/whoami/greeting", "--metrics-bind-address=:8080"},
						Env: []corev1.EnvVar{
							{Name: "WHOAMI_CONFIGMAP", Value: report},
							{Name: "WHOAMI_VALUE", Value: "one"},
							{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "KUBERNETES_SERVICE_HOST", Value: "10.0.0.1"},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "files", MountPath: "/etc/whoami"}},
					}},
					Volumes: []corev1.Volume{{Name: "files", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "whoami-files"}}}}},
				},
			},
		},
	}
}

// createOrExists runs create and fails t unless it succeeds or the object exists.
func createOrExists(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create: %v", err)
	}
}

// runnerPoll polls cond every 100ms for up to a minute.
func runnerPoll(ctx context.Context, t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitReport waits until the ConfigMap written by whoami satisfies ok and
// returns its data.
func waitReport(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	var data map[string]string
	runnerPoll(ctx, t, "ConfigMap "+name, func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(runnerTestNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		data = cm.Data
		return ok(data), nil
	})
	return data
}

// waitDeployment waits until Deployment name satisfies ok and returns it.
func waitDeployment(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, what string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var dep *appsv1.Deployment
	runnerPoll(ctx, t, "Deployment "+name+": "+what, func(ctx context.Context) (bool, error) {
		var err error
		dep, err = cs.AppsV1().Deployments(runnerTestNS).Get(ctx, name, metav1.GetOptions{})
		return err == nil && ok(dep), nil
	})
	return dep
}

// waitProcessGone waits until no process has pid.
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	runnerPoll(context.Background(), t, "pid "+strconv.Itoa(pid)+" to exit", func(context.Context) (bool, error) {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH), nil
	})
}

// depCondition returns the condition of type typ, or nil.
func depCondition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// conditionStatus returns the status of condition typ, "" if absent.
func conditionStatus(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) corev1.ConditionStatus {
	if c := depCondition(d, typ); c != nil {
		return c.Status
	}
	return ""
}

// conditionReason returns the reason of condition typ, "" if absent.
func conditionReason(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) string {
	if c := depCondition(d, typ); c != nil {
		return c.Reason
	}
	return ""
}

// conditionMessage returns the message of condition typ, "" if absent.
func conditionMessage(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) string {
	if c := depCondition(d, typ); c != nil {
		return c.Message
	}
	return ""
}
