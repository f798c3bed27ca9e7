package klusterlet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// TestRenderEnforcesRestricted checks that in every mode each namespace the
// operator applies for the agent enforces the Pod Security level of
// pkg/podsecurity, that the add-on agents' namespace, which OCM's add-ons
// share, does so only when the operator is told to (and warns and audits
// either way), and that each Pod template it applies meets restricted.
func TestRenderEnforcesRestricted(t *testing.T) {
	def := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName},
		Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1"}}
	tests := []struct {
		name          string
		k             *operatorv1.Klusterlet
		enforceShared bool
		namespaces    []string
		// shared is the add-on namespace, when rendered.
		shared bool
	}{
		{name: "Default", k: def, namespaces: []string{config.AgentNamespace}, shared: true},
		{name: "Default enforcing in shared namespaces", k: def, enforceShared: true,
			namespaces: []string{config.AgentNamespace, addonv1alpha1.DefaultAddonInstallNamespace}, shared: true},
		{name: "Singleton", k: &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName},
			Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1", DeployOption: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeSingleton}}},
			namespaces: []string{config.AgentNamespace}, shared: true},
		{name: "Hosted", k: &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: config.HostedKlusterletName("cluster1")},
			Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1", DeployOption: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeHosted}}},
			namespaces: []string{config.HostedKlusterletName("cluster1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, _, err := config.AgentValuesFromKlusterlet(tt.k, []byte("kubeconfig"))
			if err != nil {
				t.Fatal(err)
			}
			values.ManagedKubeconfig = []byte("managed")
			objs, err := render(tt.k, values, nil, tt.enforceShared)
			if err != nil {
				t.Fatal(err)
			}
			enforced, pods := map[string]bool{}, 0
			for _, o := range objs {
				if o.GetKind() == "Namespace" {
					enforced[o.GetName()] = podsecurity.EnforcesRestricted(o.GetLabels())
					if by := o.GetAnnotations()[podsecurity.SetByAnnotation]; by != podsecurity.SetByKlusterlet {
						t.Errorf("namespace %s: annotation %s=%q", o.GetName(), podsecurity.SetByAnnotation, by)
					}
				}
				if o.GetKind() == "Namespace" && o.GetName() == addonv1alpha1.DefaultAddonInstallNamespace {
					if !tt.shared {
						t.Errorf("namespace %s rendered in mode %s", o.GetName(), tt.k.Mode())
					}
					for k, v := range podsecurity.SharedLabels(tt.enforceShared) {
						if o.GetLabels()[k] != v {
							t.Errorf("namespace %s: label %s=%q, want %q", o.GetName(), k, o.GetLabels()[k], v)
						}
					}
					if podsecurity.EnforcesRestricted(o.GetLabels()) != tt.enforceShared {
						t.Errorf("namespace %s enforces restricted: %t, want %t", o.GetName(), !tt.enforceShared, tt.enforceShared)
					}
				}
				tmpl, ok, err := podsecurity.PodTemplate(o)
				if err != nil || !ok {
					continue
				}
				pods++
				if f := podsecurity.Check(&tmpl.ObjectMeta, &tmpl.Spec); len(f) > 0 {
					t.Errorf("%s %s/%s %s", o.GetKind(), o.GetNamespace(), o.GetName(), podsecurity.Describe(f))
				}
			}
			for _, ns := range tt.namespaces {
				if !enforced[ns] {
					t.Errorf("namespace %s is not rendered with the Pod Security labels; rendered: %v", ns, enforced)
				}
			}
			if pods == 0 {
				t.Error("no Pod template rendered: the agent Deployment is missing")
			}
		})
	}
}

// TestRenderPullSecret checks that in Default and Hosted mode the agent's
// namespace gets the copy of the image pull Secret, labeled as the
// Klusterlet's and as a copy, and the agent Deployment references it.
func TestRenderPullSecret(t *testing.T) {
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorv1.OperatorNamespace, Name: pullsecret.Name},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r":{}}}`)}}
	for _, k := range []*operatorv1.Klusterlet{
		{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName}, Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: config.HostedKlusterletName("cluster1")},
			Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1", DeployOption: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeHosted}}},
	} {
		t.Run(string(k.Mode()), func(t *testing.T) {
			values, _, err := config.AgentValuesFromKlusterlet(k, []byte("kubeconfig"))
			if err != nil {
				t.Fatal(err)
			}
			values.ManagedKubeconfig = []byte("managed")
			objs, err := render(k, values, source, false)
			if err != nil {
				t.Fatal(err)
			}
			ns, copies, refs := agentNamespace(k), 0, 0
			for _, o := range objs {
				switch {
				case o.GetKind() == "Secret" && o.GetName() == pullsecret.Name:
					copies++
					if o.GetNamespace() != ns || o.GetLabels()[pullsecret.CopyLabel] != source.Namespace || o.GetLabels()[config.KlusterletOwnerLabel] != k.Name {
						t.Errorf("copy %s/%s labels %v", o.GetNamespace(), o.GetName(), o.GetLabels())
					}
				case o.GetKind() == "Deployment" && o.GetName() == agentDeployment(k):
					list, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "imagePullSecrets")
					refs = len(list)
				}
			}
			if copies != 1 || refs != 1 {
				t.Errorf("%d copies and %d references, want one each in %s", copies, refs, ns)
			}
		})
	}
}
