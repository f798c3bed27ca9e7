package v1beta1_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

const kubeSigner = "kubernetes.io/kube-apiserver-client"

// kubeReg and customReg build v1beta1 registrations.
func kubeReg(user, driver string) v1beta1.RegistrationConfig {
	return v1beta1.RegistrationConfig{Type: v1beta1.KubeClient, KubeClient: &v1beta1.KubeClientConfig{
		Subject: v1beta1.KubeClientSubject{BaseSubject: v1beta1.BaseSubject{User: user, Groups: []string{"g-" + user}}}, Driver: driver}}
}

func customReg(signer string, ou ...string) v1beta1.RegistrationConfig {
	return v1beta1.RegistrationConfig{Type: v1beta1.CustomSigner, CustomSigner: &v1beta1.CustomSignerConfig{
		SignerName: signer, Subject: v1beta1.Subject{BaseSubject: v1beta1.BaseSubject{User: "c", Groups: []string{"g-c"}}, OrganizationUnits: ou}}}
}

// alphaReg builds a v1alpha1 registration.
func alphaReg(signer, user string, groups []string, ou ...string) v1alpha1.RegistrationConfig {
	return v1alpha1.RegistrationConfig{SignerName: signer, Subject: v1alpha1.Subject{User: user, Groups: groups, OrganizationUnits: ou}}
}

func TestManagedClusterAddOnConversion(t *testing.T) {
	related := v1alpha1.ObjectReference{Group: "addon.open-cluster-management.io", Resource: "clustermanagementaddons", Name: "hello"}
	tests := []pair{{
		name:  "empty",
		alpha: &v1alpha1.ManagedClusterAddOn{},
		beta:  &v1beta1.ManagedClusterAddOn{},
	}, {
		name: "every field v1beta1 holds; installNamespace in OCM's annotation",
		alpha: &v1alpha1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", "keep", "me"),
			Spec: v1alpha1.ManagedClusterAddOnSpec{
				InstallNamespace: "agents", //nolint:staticcheck // the deprecated field converts too
				Configs:          []v1alpha1.AddOnConfig{{ConfigGroupResource: adcGR, ConfigReferent: v1alpha1.ConfigReferent{Namespace: "ns", Name: "c"}}},
			},
			Status: v1alpha1.ManagedClusterAddOnStatus{
				Conditions:       []metav1.Condition{condition},
				RelatedObjects:   []v1alpha1.ObjectReference{related},
				AddOnMeta:        v1alpha1.AddOnMeta{DisplayName: "Hello", Description: "d"},
				SupportedConfigs: []v1alpha1.ConfigGroupResource{adcGR},
				ConfigReferences: []v1alpha1.ConfigReference{{
					ConfigGroupResource: adcGR, ConfigReferent: v1alpha1.ConfigReferent{Namespace: "ns", Name: "c"}, LastObservedGeneration: 4,
					DesiredConfig: hashA("ns", "c", "h2"), LastAppliedConfig: hashA("ns", "c", "h1"),
				}},
				Namespace: "agents",
				Registrations: []v1alpha1.RegistrationConfig{
					alphaReg(kubeSigner, "k", []string{"g-k"}),
					alphaReg("example.com/signer", "c", []string{"g-c"}, "ou"),
				},
				HealthCheck:      v1alpha1.HealthCheck{Mode: v1alpha1.HealthCheckModeCustomized},
				KubeClientDriver: "token",
			},
		},
		beta: &v1beta1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", "keep", "me", v1beta1.InstallNamespaceAnnotation, "agents"),
			Spec: v1beta1.ManagedClusterAddOnSpec{
				Configs: []v1beta1.AddOnConfig{{ConfigGroupResource: adcGRb, ConfigReferent: v1beta1.ConfigReferent{Namespace: "ns", Name: "c"}}},
			},
			Status: v1beta1.ManagedClusterAddOnStatus{
				Conditions:       []metav1.Condition{condition},
				RelatedObjects:   []v1beta1.ObjectReference{{Group: related.Group, Resource: related.Resource, Name: related.Name}},
				AddOnMeta:        v1beta1.AddOnMeta{DisplayName: "Hello", Description: "d"},
				SupportedConfigs: []v1beta1.ConfigGroupResource{adcGRb},
				ConfigReferences: []v1beta1.ConfigReference{{
					ConfigGroupResource: adcGRb, LastObservedGeneration: 4,
					DesiredConfig: hashB("ns", "c", "h2"), LastAppliedConfig: hashB("ns", "c", "h1"),
				}},
				Namespace:     "agents",
				Registrations: []v1beta1.RegistrationConfig{kubeReg("k", "token"), customReg("example.com/signer", "ou")},
				HealthCheck:   v1beta1.HealthCheck{Mode: v1beta1.HealthCheckModeCustomized},
			},
		},
	}, {
		name: "v1alpha1-only status fields are kept in an annotation",
		alpha: &v1alpha1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello"),
			Status: v1alpha1.ManagedClusterAddOnStatus{
				AddOnConfiguration: v1alpha1.ConfigCoordinates{CRDName: "c.example.com", CRName: "c"}, //nolint:staticcheck // the deprecated field converts too
				ConfigReferences: []v1alpha1.ConfigReference{
					{ConfigGroupResource: adcGR, ConfigReferent: v1alpha1.ConfigReferent{Namespace: "ns", Name: "old"}, DesiredConfig: hashA("ns", "new", "h")},
					{ConfigGroupResource: cmGR, ConfigReferent: v1alpha1.ConfigReferent{Name: "only"}},
				},
				Registrations:    []v1alpha1.RegistrationConfig{alphaReg(kubeSigner, "k", []string{"g-k"}, "ou-k"), alphaReg("example.com/signer", "c", []string{"g-c"})},
				KubeClientDriver: "csr",
			},
		},
		beta: &v1beta1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", v1beta1.V1alpha1FieldsAnnotation,
				`{"statusAddOnConfiguration":{"crdName":"c.example.com","crName":"c"},"organizationUnits":[["ou-k"],null],`+
					`"configReferents":[{"namespace":"ns","name":"old"},{"name":"only"}]}`),
			Status: v1beta1.ManagedClusterAddOnStatus{
				ConfigReferences: []v1beta1.ConfigReference{
					{ConfigGroupResource: adcGRb, DesiredConfig: hashB("ns", "new", "h")},
					{ConfigGroupResource: cmGRb},
				},
				Registrations: []v1beta1.RegistrationConfig{kubeReg("k", "csr"), customReg("example.com/signer")},
			},
		},
	}, {
		name: "kubeClientDriver without a kubeClient registration is kept in an annotation",
		alpha: &v1alpha1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello"),
			Status: v1alpha1.ManagedClusterAddOnStatus{
				Registrations:    []v1alpha1.RegistrationConfig{alphaReg("example.com/signer", "c", []string{"g-c"})},
				KubeClientDriver: "token",
			},
		},
		beta: &v1beta1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", v1beta1.V1alpha1FieldsAnnotation, `{"kubeClientDriver":"token"}`),
			Status:     v1beta1.ManagedClusterAddOnStatus{Registrations: []v1beta1.RegistrationConfig{customReg("example.com/signer")}},
		},
	}, {
		name: "kubeClient registrations with different drivers keep theirs in an annotation",
		alpha: &v1alpha1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", v1beta1.V1beta1FieldsAnnotation, `{"registrationDrivers":["csr","","token"]}`),
			Status: v1alpha1.ManagedClusterAddOnStatus{
				Registrations: []v1alpha1.RegistrationConfig{
					alphaReg(kubeSigner, "a", []string{"g-a"}), alphaReg("example.com/signer", "c", []string{"g-c"}), alphaReg(kubeSigner, "b", []string{"g-b"}),
				},
				KubeClientDriver: "csr",
			},
		},
		beta: &v1beta1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello"),
			Status: v1beta1.ManagedClusterAddOnStatus{
				Registrations: []v1beta1.RegistrationConfig{kubeReg("a", "csr"), customReg("example.com/signer"), kubeReg("b", "token")},
			},
		},
	}, {
		name:  "an empty install-namespace annotation stays an annotation",
		alpha: &v1alpha1.ManagedClusterAddOn{ObjectMeta: meta("cluster1", "hello", v1beta1.InstallNamespaceAnnotation, "")},
		beta:  &v1beta1.ManagedClusterAddOn{ObjectMeta: meta("cluster1", "hello", v1beta1.InstallNamespaceAnnotation, "")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPair(t, tt) })
	}
}

// TestManagedClusterAddOnStaleAnnotations covers annotations that no longer
// match the object: a client of the other version changed the lists they index.
func TestManagedClusterAddOnStaleAnnotations(t *testing.T) {
	t.Run("v1alpha1 fields indexed by a list that changed length are dropped", func(t *testing.T) {
		beta := &v1beta1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", v1beta1.V1alpha1FieldsAnnotation,
				`{"organizationUnits":[["a"],["b"]],"configReferents":[{"name":"x"},{"name":"y"}]}`),
			Status: v1beta1.ManagedClusterAddOnStatus{
				ConfigReferences: []v1beta1.ConfigReference{{ConfigGroupResource: adcGRb, DesiredConfig: hashB("ns", "d", "h")}},
				Registrations:    []v1beta1.RegistrationConfig{kubeReg("k", "")},
			},
		}
		var got v1alpha1.ManagedClusterAddOn
		if err := got.ConvertFrom(beta); err != nil {
			t.Fatal(err)
		}
		if ref := got.Status.ConfigReferences[0].ConfigReferent; ref != (v1alpha1.ConfigReferent{Namespace: "ns", Name: "d"}) {
			t.Errorf("config referent %+v, want the desired config's", ref)
		}
		if ou := got.Status.Registrations[0].Subject.OrganizationUnits; ou != nil {
			t.Errorf("organization units %v, want none", ou)
		}
		if _, ok := got.Annotations[v1beta1.V1alpha1FieldsAnnotation]; ok {
			t.Errorf("annotation %s left on the v1alpha1 object", v1beta1.V1alpha1FieldsAnnotation)
		}
	})
	t.Run("drivers indexed by a list that changed length are dropped", func(t *testing.T) {
		alpha := &v1alpha1.ManagedClusterAddOn{
			ObjectMeta: meta("cluster1", "hello", v1beta1.V1beta1FieldsAnnotation, `{"registrationDrivers":["csr","token"]}`),
			Status: v1alpha1.ManagedClusterAddOnStatus{
				Registrations: []v1alpha1.RegistrationConfig{alphaReg(kubeSigner, "a", nil)}, KubeClientDriver: "token",
			},
		}
		var got v1beta1.ManagedClusterAddOn
		if err := alpha.ConvertTo(&got); err != nil {
			t.Fatal(err)
		}
		if d := got.Status.Registrations[0].KubeClient.Driver; d != "token" {
			t.Errorf("driver %q, want status.kubeClientDriver token", d)
		}
	})
	t.Run("an annotation that is not JSON fails the conversion and names the annotation", func(t *testing.T) {
		beta := &v1beta1.ManagedClusterAddOn{ObjectMeta: meta("cluster1", "hello", v1beta1.V1alpha1FieldsAnnotation, "{")}
		err := (&v1alpha1.ManagedClusterAddOn{}).ConvertFrom(beta)
		assert.ErrorContains(t, err, v1beta1.V1alpha1FieldsAnnotation)
	})
	t.Run("a hub object of another kind is refused", func(t *testing.T) {
		if err := (&v1alpha1.ManagedClusterAddOn{}).ConvertTo(&v1beta1.AddOnTemplate{}); err == nil {
			t.Error("converting a ManagedClusterAddOn into an AddOnTemplate succeeded")
		}
	})
}
