package manager

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// hubKubeconfigDir is where the agent's hub credential Secret is mounted.
const hubKubeconfigDir = "/managed/hub-kubeconfig"

// exampleLabels mark the agent's objects as an example's; the local
// environment's component runner runs Deployments so labeled.
var exampleLabels = map[string]string{
	"app.kubernetes.io/name":    "hellomanager-agent",
	"app.kubernetes.io/part-of": "kubectl-ocm-examples",
}

// agentName names the agent's ServiceAccount, ClusterRole, RoleBinding and
// Deployment.
func agentName(o Options) string { return o.AddonName + "-agent" }

// agentNamespace is where the agent runs on mca's cluster, as
// addon-framework's examples resolve it: the desired
// AddOnDeploymentConfig's agentInstallNamespace, else the install-namespace
// annotation (a v1alpha1 spec.installNamespace), else the default.
func agentNamespace(ctx context.Context, c client.Reader, mca *addonv1beta1.ManagedClusterAddOn) (string, error) {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.Group != addonv1beta1.GroupVersion.Group || ref.Resource != "addondeploymentconfigs" || ref.DesiredConfig == nil {
			continue
		}
		adc := &addonv1beta1.AddOnDeploymentConfig{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ref.DesiredConfig.Namespace, Name: ref.DesiredConfig.Name}, adc)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read AddOnDeploymentConfig %s/%s: %w", ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, err)
		}
		if adc.Spec.AgentInstallNamespace != "" {
			return adc.Spec.AgentInstallNamespace, nil
		}
	}
	return installNamespace(mca), nil
}

// agentObjects are the agent's manifests for cluster, installed in ns: its
// namespace (left in place when the add-on is removed), ServiceAccount,
// rights on ConfigMaps and Leases there, and its Deployment, which mounts
// the hub credential Secret <addon>-hub-kubeconfig the cluster's agent
// writes.
func agentObjects(o Options, cluster, ns string) []runtime.Object {
	name := agentName(o)
	meta := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: exampleLabels}
	}
	return []runtime.Object{
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: ns,
			Annotations: map[string]string{"addon.open-cluster-management.io/deletion-orphan": ""}}},
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta(ns)},
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(""), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		}},
		&rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(ns),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}},
		agentDeployment(o, cluster, ns),
	}
}

// agentDeployment runs the helloworld example's agent under the add-on's
// name: it copies the ConfigMaps of its cluster's namespace on the hub into
// ns and renews Lease <addon> there.
func agentDeployment(o Options, cluster, ns string) *appsv1.Deployment {
	name := agentName(o)
	selector := map[string]string{"app.kubernetes.io/name": exampleLabels["app.kubernetes.io/name"]}
	d := &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: exampleLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					Containers: []corev1.Container{{
						Name: "agent", Image: o.AgentImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{
							"--addon-name=" + o.AddonName,
							"--cluster-name=" + cluster,
							"--namespace=" + ns,
							"--hub-kubeconfig=" + hubKubeconfigDir + "/kubeconfig",
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "hub-kubeconfig", MountPath: hubKubeconfigDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: o.AddonName + "-hub-kubeconfig"}}}},
				},
			},
		},
	}
	if o.AgentWithoutSecurityContext {
		d.Spec.Template.Spec.Containers[0].SecurityContext = nil
	}
	return d
}

// typeMeta is the apiVersion and kind a manifest must carry.
func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
