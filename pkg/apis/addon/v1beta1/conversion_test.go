package v1beta1_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// pair is one v1alpha1 object and the v1beta1 object it converts to; each
// must convert into the other exactly.
type pair struct {
	name  string
	alpha conversion.Convertible
	beta  conversion.Hub
}

// checkPair converts p.alpha to v1beta1 and p.beta to v1alpha1 and compares
// each result with the other side of the pair.
func checkPair(t *testing.T, p pair) {
	t.Helper()
	gotBeta := p.beta.DeepCopyObject().(conversion.Hub)
	zero(gotBeta)
	if err := p.alpha.ConvertTo(gotBeta); err != nil {
		t.Fatalf("v1alpha1 to v1beta1: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(gotBeta, p.beta) {
		t.Errorf("v1alpha1 to v1beta1 (-got +want):\n%s", diff.Diff(gotBeta, p.beta))
	}
	gotAlpha := p.alpha.DeepCopyObject().(conversion.Convertible)
	zero(gotAlpha)
	if err := gotAlpha.ConvertFrom(p.beta); err != nil {
		t.Fatalf("v1beta1 to v1alpha1: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(gotAlpha, p.alpha) {
		t.Errorf("v1beta1 to v1alpha1 (-got +want):\n%s", diff.Diff(gotAlpha, p.alpha))
	}
}

// zero resets every field of one of the eight add-on kinds, so that a
// conversion into it starts from nothing.
func zero(obj any) {
	switch o := obj.(type) {
	case *v1alpha1.ClusterManagementAddOn:
		*o = v1alpha1.ClusterManagementAddOn{}
	case *v1alpha1.ManagedClusterAddOn:
		*o = v1alpha1.ManagedClusterAddOn{}
	case *v1alpha1.AddOnDeploymentConfig:
		*o = v1alpha1.AddOnDeploymentConfig{}
	case *v1alpha1.AddOnTemplate:
		*o = v1alpha1.AddOnTemplate{}
	case *v1beta1.ClusterManagementAddOn:
		*o = v1beta1.ClusterManagementAddOn{}
	case *v1beta1.ManagedClusterAddOn:
		*o = v1beta1.ManagedClusterAddOn{}
	case *v1beta1.AddOnDeploymentConfig:
		*o = v1beta1.AddOnDeploymentConfig{}
	case *v1beta1.AddOnTemplate:
		*o = v1beta1.AddOnTemplate{}
	}
}

// meta returns object metadata with the given annotations, given as key, value, ...
func meta(namespace, name string, kv ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"team": "a"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[kv[i]] = kv[i+1]
	}
	return m
}

var (
	adcGR  = v1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
	adcGRb = v1beta1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
	cmGR   = v1alpha1.ConfigGroupResource{Group: "", Resource: "configmaps"}
	cmGRb  = v1beta1.ConfigGroupResource{Group: "", Resource: "configmaps"}

	condition = metav1.Condition{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Completed",
		Message: "done", ObservedGeneration: 2, LastTransitionTime: metav1.Unix(1700000000, 0)}
)

func hashA(ns, name, hash string) *v1alpha1.ConfigSpecHash {
	return &v1alpha1.ConfigSpecHash{ConfigReferent: v1alpha1.ConfigReferent{Namespace: ns, Name: name}, SpecHash: hash}
}

func hashB(ns, name, hash string) *v1beta1.ConfigSpecHash {
	return &v1beta1.ConfigSpecHash{ConfigReferent: v1beta1.ConfigReferent{Namespace: ns, Name: name}, SpecHash: hash}
}

func TestClusterManagementAddOnConversion(t *testing.T) {
	rollout := clusterv1alpha1.RolloutStrategy{Type: "Progressive"}
	tests := []pair{{
		name:  "empty",
		alpha: &v1alpha1.ClusterManagementAddOn{},
		beta:  &v1beta1.ClusterManagementAddOn{},
	}, {
		name: "every field v1beta1 holds",
		alpha: &v1alpha1.ClusterManagementAddOn{
			ObjectMeta: meta("", "helloworld", "addon.open-cluster-management.io/lifecycle", "self"),
			Spec: v1alpha1.ClusterManagementAddOnSpec{
				AddOnMeta: v1alpha1.AddOnMeta{DisplayName: "Hello", Description: "says hello"},
				SupportedConfigs: []v1alpha1.ConfigMeta{
					{ConfigGroupResource: adcGR, DefaultConfig: &v1alpha1.ConfigReferent{Namespace: "ns", Name: "default"}},
					{ConfigGroupResource: cmGR},
				},
				InstallStrategy: v1alpha1.InstallStrategy{Type: "Placements", Placements: []v1alpha1.PlacementStrategy{{
					PlacementRef:    v1alpha1.PlacementRef{Namespace: "default", Name: "all"},
					Configs:         []v1alpha1.AddOnConfig{{ConfigGroupResource: adcGR, ConfigReferent: v1alpha1.ConfigReferent{Namespace: "ns", Name: "p"}}},
					RolloutStrategy: rollout,
				}}},
			},
			Status: v1alpha1.ClusterManagementAddOnStatus{
				DefaultConfigReferences: []v1alpha1.DefaultConfigReference{{ConfigGroupResource: adcGR, DesiredConfig: hashA("ns", "default", "h1")}},
				InstallProgressions: []v1alpha1.InstallProgression{{
					PlacementRef: v1alpha1.PlacementRef{Namespace: "default", Name: "all"},
					ConfigReferences: []v1alpha1.InstallConfigReference{{ConfigGroupResource: adcGR,
						DesiredConfig: hashA("ns", "p", "h2"), LastKnownGoodConfig: hashA("ns", "p", "h1"), LastAppliedConfig: hashA("ns", "p", "h0")}},
					Conditions: []metav1.Condition{condition},
				}},
			},
		},
		beta: &v1beta1.ClusterManagementAddOn{
			ObjectMeta: meta("", "helloworld", "addon.open-cluster-management.io/lifecycle", "self"),
			Spec: v1beta1.ClusterManagementAddOnSpec{
				AddOnMeta: v1beta1.AddOnMeta{DisplayName: "Hello", Description: "says hello"},
				DefaultConfigs: []v1beta1.AddOnConfig{
					{ConfigGroupResource: adcGRb, ConfigReferent: v1beta1.ConfigReferent{Namespace: "ns", Name: "default"}},
					{ConfigGroupResource: cmGRb, ConfigReferent: v1beta1.ConfigReferent{Name: v1beta1.ReservedNoDefaultConfigName}},
				},
				InstallStrategy: v1beta1.InstallStrategy{Type: "Placements", Placements: []v1beta1.PlacementStrategy{{
					PlacementRef:    v1beta1.PlacementRef{Namespace: "default", Name: "all"},
					Configs:         []v1beta1.AddOnConfig{{ConfigGroupResource: adcGRb, ConfigReferent: v1beta1.ConfigReferent{Namespace: "ns", Name: "p"}}},
					RolloutStrategy: rollout,
				}}},
			},
			Status: v1beta1.ClusterManagementAddOnStatus{
				DefaultConfigReferences: []v1beta1.DefaultConfigReference{{ConfigGroupResource: adcGRb, DesiredConfig: hashB("ns", "default", "h1")}},
				InstallProgressions: []v1beta1.InstallProgression{{
					PlacementRef: v1beta1.PlacementRef{Namespace: "default", Name: "all"},
					ConfigReferences: []v1beta1.InstallConfigReference{{ConfigGroupResource: adcGRb,
						DesiredConfig: hashB("ns", "p", "h2"), LastKnownGoodConfig: hashB("ns", "p", "h1"), LastAppliedConfig: hashB("ns", "p", "h0")}},
					Conditions: []metav1.Condition{condition},
				}},
			},
		},
	}, {
		name: "addOnConfiguration is kept in an annotation",
		alpha: &v1alpha1.ClusterManagementAddOn{
			ObjectMeta: meta("", "legacy", "keep", "me"),
			Spec:       v1alpha1.ClusterManagementAddOnSpec{AddOnConfiguration: v1alpha1.ConfigCoordinates{CRDName: "c.example.com", CRName: "c", LastObservedGeneration: 3}}, //nolint:staticcheck // the deprecated field converts too
		},
		beta: &v1beta1.ClusterManagementAddOn{
			ObjectMeta: meta("", "legacy", "keep", "me", v1beta1.V1alpha1FieldsAnnotation,
				`{"addOnConfiguration":{"crdName":"c.example.com","crName":"c","lastObservedGeneration":3}}`),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPair(t, tt) })
	}
}

func TestAddOnDeploymentConfigConversion(t *testing.T) {
	resources := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	toleration := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	checkPair(t, pair{
		alpha: &v1alpha1.AddOnDeploymentConfig{
			ObjectMeta: meta("ns", "deploy"),
			Spec: v1alpha1.AddOnDeploymentConfigSpec{
				CustomizedVariables:   []v1alpha1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "4"}},
				NodePlacement:         &v1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}, Tolerations: []corev1.Toleration{toleration}},
				Registries:            []v1alpha1.ImageMirror{{Mirror: "quay.io/mirror", Source: "quay.io/ocm"}},
				ProxyConfig:           v1alpha1.ProxyConfig{HTTPProxy: "http://p", HTTPSProxy: "https://p", CABundle: []byte("ca"), NoProxy: "localhost"},
				AgentInstallNamespace: "agents",
				ResourceRequirements:  []v1alpha1.ContainerResourceRequirements{{ContainerID: "deployments:agent:agent", Resources: resources}},
			},
		},
		beta: &v1beta1.AddOnDeploymentConfig{
			ObjectMeta: meta("ns", "deploy"),
			Spec: v1beta1.AddOnDeploymentConfigSpec{
				CustomizedVariables:   []v1beta1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "4"}},
				NodePlacement:         &v1beta1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}, Tolerations: []corev1.Toleration{toleration}},
				Registries:            []v1beta1.ImageMirror{{Mirror: "quay.io/mirror", Source: "quay.io/ocm"}},
				ProxyConfig:           v1beta1.ProxyConfig{HTTPProxy: "http://p", HTTPSProxy: "https://p", CABundle: []byte("ca"), NoProxy: "localhost"},
				AgentInstallNamespace: "agents",
				ResourceRequirements:  []v1beta1.ContainerResourceRequirements{{ContainerID: "deployments:agent:agent", Resources: resources}},
			},
		},
	})
}

func TestAddOnTemplateConversion(t *testing.T) {
	agent := workv1.ManifestWorkSpec{DeleteOption: &workv1.DeleteOption{PropagationPolicy: "Orphan"}}
	roleRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"}
	checkPair(t, pair{
		alpha: &v1alpha1.AddOnTemplate{
			ObjectMeta: meta("", "hello-0.1"),
			Spec: v1alpha1.AddOnTemplateSpec{AddonName: "hello", AgentSpec: agent, Registration: []v1alpha1.RegistrationSpec{
				{Type: v1alpha1.RegistrationTypeKubeClient, KubeClient: &v1alpha1.KubeClientRegistrationConfig{HubPermissions: []v1alpha1.HubPermissionConfig{
					{Type: v1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &v1alpha1.CurrentClusterBindingConfig{ClusterRoleName: "cm-reader"}},
					{Type: v1alpha1.HubPermissionsBindingSingleNamespace, SingleNamespace: &v1alpha1.SingleNamespaceBindingConfig{Namespace: "shared", RoleRef: roleRef}},
				}}},
				{Type: v1alpha1.RegistrationTypeCustomSigner, CustomSigner: &v1alpha1.CustomSignerRegistrationConfig{
					SignerName: "example.com/signer",
					Subject:    &v1alpha1.Subject{User: "u", Groups: []string{"g"}, OrganizationUnits: []string{"ou"}},
					SigningCA:  v1alpha1.SigningCARef{Namespace: "ca-ns", Name: "ca"},
				}},
			}},
		},
		beta: &v1beta1.AddOnTemplate{
			ObjectMeta: meta("", "hello-0.1"),
			Spec: v1beta1.AddOnTemplateSpec{AddonName: "hello", AgentSpec: agent, Registration: []v1beta1.RegistrationSpec{
				{Type: v1beta1.RegistrationTypeKubeClient, KubeClient: &v1beta1.KubeClientRegistrationConfig{HubPermissions: []v1beta1.HubPermissionConfig{
					{Type: v1beta1.HubPermissionsBindingCurrentCluster, CurrentCluster: &v1beta1.CurrentClusterBindingConfig{ClusterRoleName: "cm-reader"}},
					{Type: v1beta1.HubPermissionsBindingSingleNamespace, SingleNamespace: &v1beta1.SingleNamespaceBindingConfig{Namespace: "shared", RoleRef: roleRef}},
				}}},
				{Type: v1beta1.RegistrationTypeCustomSigner, CustomSigner: &v1beta1.CustomSignerRegistrationConfig{
					SignerName: "example.com/signer",
					Subject:    &v1beta1.AddOnTemplateSubject{User: "u", Groups: []string{"g"}, OrganizationUnits: []string{"ou"}},
					SigningCA:  v1beta1.SigningCARef{Namespace: "ca-ns", Name: "ca"},
				}},
			}},
		},
	})
}
