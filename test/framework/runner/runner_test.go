package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// runnerTestNS is the namespace of the Runner's integration test.
const runnerTestNS = "runner-test"

// TestRunner runs the whoami helper (test/framework/internal/whoami) as a
// Deployment through the component Runner on a real API server, and checks
// identity, arguments, environment, volumes, status and lifecycle.
func TestRunner(t *testing.T) {
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub")
	hub := env.Cluster("hub")
	bin := framework.BuildForTest(t, "./test/framework/internal/whoami", "whoami")
	runner := StartForTest(t, map[string]string{"example.com/whoami": bin}, hub)
	cs := hub.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	createRunnerTestObjects(ctx, t, cs)
	// Not labeled for the Runner: must stay untouched.
	ignored := whoamiDeployment("ignored", "whoami", "ignored-report")
	ignored.Labels = nil
	createOrExists(t, func() error {
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, ignored, metav1.CreateOptions{})
		return err
	})

	var firstPid int
	t.Run("runs as its ServiceAccount with rewritten args and env", func(t *testing.T) {
		dep := whoamiDeployment("whoami", "whoami", "whoami-report")
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["user"] != "" })
		assert.Equal(t, "system:serviceaccount:"+runnerTestNS+":whoami", report["user"])
		assert.Equal(t, "v1", report["tag"])
		assert.Equal(t, "one", report["value"])
		assert.Equal(t, "whoami-local", report["pod"])
		assert.Equal(t, "hello", report["file"], "the ConfigMap volume is materialized and its mountPath rewritten")
		assert.Empty(t, report["env"], "no in-cluster Service variables")
		assert.True(t, strings.HasPrefix(report["listen"], "127.0.0.1:") && report["listen"] != "127.0.0.1:8080",
			"bind address moved to a free loopback port, got %q", report["listen"])
		firstPid, err = strconv.Atoi(report["pid"])
		require.NoError(t, err)
		info, ok := runner.Process("hub", runnerTestNS, "whoami")
		require.True(t, ok)
		assert.Equal(t, firstPid, info.Pid)
		assert.Equal(t, runner.LogPath("hub", runnerTestNS, "whoami"), info.LogPath)
		kc, err := clientcmd.LoadFromFile(filepath.Join(info.Dir, "kubeconfig"))
		require.NoError(t, err)
		kctx := kc.Contexts[kc.CurrentContext]
		require.NotNil(t, kctx)
		assert.Equal(t, hub.Server(), kc.Clusters[kctx.Cluster].Server)
		assert.NotEmpty(t, kc.AuthInfos[kctx.AuthInfo].TokenFile, "the kubeconfig reads a token file that the Runner refreshes")
		assert.Empty(t, kc.AuthInfos[kctx.AuthInfo].Token)

		got := waitDeployment(ctx, t, cs, "whoami", "available", func(d *appsv1.Deployment) bool {
			return d.Status.AvailableReplicas == 1 && conditionStatus(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
		})
		assert.Equal(t, got.Generation, got.Status.ObservedGeneration)
		assert.Equal(t, int32(1), got.Status.ReadyReplicas)
		assert.Equal(t, int32(0), got.Status.UnavailableReplicas)
		log, err := os.ReadFile(info.LogPath)
		require.NoError(t, err)
		assert.Contains(t, string(log), "reported")
	})

	t.Run("keeps ConfigMap volumes in sync", func(t *testing.T) {
		cm, err := cs.CoreV1().ConfigMaps(runnerTestNS).Get(ctx, "whoami-files", metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data["greeting"] = "hello again"
		_, err = cs.CoreV1().ConfigMaps(runnerTestNS).Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["file"] == "hello again" })
		assert.Equal(t, strconv.Itoa(firstPid), report["pid"], "a volume change does not restart the process")
	})

	t.Run("restarts the process when the pod template changes", func(t *testing.T) {
		dep, err := cs.AppsV1().Deployments(runnerTestNS).Get(ctx, "whoami", metav1.GetOptions{})
		require.NoError(t, err)
		dep.Spec.Template.Spec.Containers[0].Command[1] = "--tag=v2"
		dep.Spec.Template.Spec.Containers[0].Env[1].Value = "two"
		_, err = cs.AppsV1().Deployments(runnerTestNS).Update(ctx, dep, metav1.UpdateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["value"] == "two" })
		assert.Equal(t, "v2", report["tag"])
		assert.NotEqual(t, strconv.Itoa(firstPid), report["pid"])
		waitProcessGone(t, firstPid)
	})

	t.Run("restarts a failing process with back-off and reports it", func(t *testing.T) {
		dep := whoamiDeployment("crasher", "whoami", "crasher-report")
		dep.Spec.Template.Spec.Containers[0].Args = append(dep.Spec.Template.Spec.Containers[0].Args, "--exit-code=3")
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitDeployment(ctx, t, cs, "crasher", "ProcessFailed", func(d *appsv1.Deployment) bool {
			return conditionReason(d, appsv1.DeploymentProgressing) == ReasonProcessFailed
		})
		msg := conditionMessage(got, appsv1.DeploymentProgressing)
		assert.Contains(t, msg, "exit status 3")
		assert.Contains(t, msg, runner.LogPath("hub", runnerTestNS, "crasher"))
		assert.Equal(t, corev1.ConditionFalse, conditionStatus(got, appsv1.DeploymentAvailable))
		assert.Equal(t, int32(0), got.Status.AvailableReplicas)
		runnerPoll(ctx, t, "two restarts of crasher", func(context.Context) (bool, error) {
			info, _ := runner.Process("hub", runnerTestNS, "crasher")
			return info.Restarts >= 2, nil
		})
		require.NoError(t, cs.AppsV1().Deployments(runnerTestNS).Delete(ctx, "crasher", metav1.DeleteOptions{}))
	})

	t.Run("runs an example's Deployment, waiting for its ServiceAccount and Secret volume", func(t *testing.T) {
		dep := whoamiDeployment("late", "late-sa", "late-report")
		dep.Labels[apply.PartOfLabelKey] = ExamplesPartOf // as an example add-on's agent
		pod := &dep.Spec.Template.Spec
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: "late-secret"}}})
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "hub-kubeconfig", MountPath: "/spoke/hub-kubeconfig"}}
		pod.Containers[0].Args = []string{"--file=/spoke/hub-kubeconfig/kubeconfig"}
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
		require.NoError(t, err)
		waitDeployment(ctx, t, cs, "late", "WaitingForServiceAccount", func(d *appsv1.Deployment) bool {
			return conditionReason(d, appsv1.DeploymentProgressing) == ReasonWaitingForServiceAccount
		})
		_, err = cs.CoreV1().ServiceAccounts(runnerTestNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "late-sa"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitDeployment(ctx, t, cs, "late", "FailedMount", func(d *appsv1.Deployment) bool {
			return conditionReason(d, appsv1.DeploymentProgressing) == ReasonFailedMount
		})
		assert.Contains(t, conditionMessage(got, appsv1.DeploymentProgressing), "late-secret")
		_, err = cs.CoreV1().Secrets(runnerTestNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-secret"},
			StringData: map[string]string{"kubeconfig": "written later"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, "late-report", func(d map[string]string) bool { return d["file"] != "" })
		assert.Equal(t, "written later", report["file"])
		assert.Equal(t, "system:serviceaccount:"+runnerTestNS+":late-sa", report["user"])
		pid, err := strconv.Atoi(report["pid"])
		require.NoError(t, err)

		// Scaling to 0 stops the process and reports zero replicas.
		_, err = cs.AppsV1().Deployments(runnerTestNS).Patch(ctx, "late", "application/merge-patch+json",
			[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		waitProcessGone(t, pid)
		waitDeployment(ctx, t, cs, "late", "scaled to 0", func(d *appsv1.Deployment) bool {
			return d.Status.Replicas == 0 && d.Status.AvailableReplicas == 0 && d.Status.ObservedGeneration == d.Generation &&
				conditionStatus(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
		})
	})

	t.Run("reports an image that maps to no binary", func(t *testing.T) {
		dep := whoamiDeployment("unmapped", "whoami", "unmapped-report")
		dep.Spec.Template.Spec.Containers[0].Image = "example.com/unknown:v1"
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitDeployment(ctx, t, cs, "unmapped", "ImageNotMapped", func(d *appsv1.Deployment) bool {
			return conditionReason(d, appsv1.DeploymentProgressing) == ReasonImageNotMapped
		})
		msg := conditionMessage(got, appsv1.DeploymentProgressing)
		assert.Contains(t, msg, `"example.com/unknown:v1"`)
		assert.Contains(t, msg, "known images: whoami")
		assert.Equal(t, corev1.ConditionFalse, conditionStatus(got, appsv1.DeploymentAvailable))
		assert.Contains(t, conditionMessage(got, appsv1.DeploymentAvailable), "example.com/unknown:v1")
	})

	t.Run("stops the process when the Deployment is deleted", func(t *testing.T) {
		info, ok := runner.Process("hub", runnerTestNS, "whoami")
		require.True(t, ok)
		require.NotZero(t, info.Pid)
		require.NoError(t, cs.AppsV1().Deployments(runnerTestNS).Delete(ctx, "whoami", metav1.DeleteOptions{}))
		waitProcessGone(t, info.Pid)
		runnerPoll(ctx, t, "the Runner to forget whoami", func(context.Context) (bool, error) {
			_, ok := runner.Process("hub", runnerTestNS, "whoami")
			return !ok, nil
		})
	})

	t.Run("leaves unlabeled Deployments alone", func(t *testing.T) {
		got, err := cs.AppsV1().Deployments(runnerTestNS).Get(ctx, "ignored", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Empty(t, got.Status.Conditions)
		_, ok := runner.Process("hub", runnerTestNS, "ignored")
		assert.False(t, ok)
	})
}

// TestRunnerStopStopsEverything checks that Stop ends every process it started.
func TestRunnerStopStopsEverything(t *testing.T) {
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub")
	hub := env.Cluster("hub")
	bin := framework.BuildForTest(t, "./test/framework/internal/whoami", "whoami")
	runner := StartForTest(t, map[string]string{"whoami": bin}, hub)
	cs := hub.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createRunnerTestObjects(ctx, t, cs)
	var pids []int
	for _, name := range []string{"a", "b"} {
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, whoamiDeployment(name, "whoami", name+"-report"), metav1.CreateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, name+"-report", func(d map[string]string) bool { return d["pid"] != "" })
		pid, err := strconv.Atoi(report["pid"])
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	require.NoError(t, runner.Stop())
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d still runs after Stop", pid)
	}
	require.NoError(t, runner.Stop(), "Stop is idempotent")
}

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
