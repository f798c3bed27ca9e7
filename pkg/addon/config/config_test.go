package config

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

var (
	adc  = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
	tmpl = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addontemplates"}
	ex   = addonv1alpha1.ConfigGroupResource{Group: "example.open-cluster-management.io", Resource: "exampleconfigs"}
)

func ref(gr addonv1alpha1.ConfigGroupResource, ns, name string) addonv1alpha1.AddOnConfig {
	return addonv1alpha1.AddOnConfig{ConfigGroupResource: gr, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}}
}

func names(rs []Resolved) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		s := r.String()
		if !r.Supported {
			s += " (unsupported)"
		}
		out = append(out, s)
	}
	return out
}

func TestResolve(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{
		{ConfigGroupResource: adc, DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: "open-cluster-management", Name: "default-deploy-config"}},
		{ConfigGroupResource: tmpl, DefaultConfig: &addonv1alpha1.ConfigReferent{Name: "helloworld-0.0.1"}},
		{ConfigGroupResource: ex},
	}}}
	mca := func(configs ...addonv1alpha1.AddOnConfig) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: configs}}
	}
	tests := []struct {
		name       string
		placements [][]addonv1alpha1.AddOnConfig
		mca        *addonv1alpha1.ManagedClusterAddOn
		want       []string
	}{
		{name: "defaults only", want: []string{
			"addondeploymentconfigs.addon.open-cluster-management.io/open-cluster-management/default-deploy-config",
			"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
		}},
		{name: "a placement overrides a default", placements: [][]addonv1alpha1.AddOnConfig{{ref(adc, "open-cluster-management", "deploy-config")}}, want: []string{
			"addondeploymentconfigs.addon.open-cluster-management.io/open-cluster-management/deploy-config",
			"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
		}},
		{name: "the later placement wins", placements: [][]addonv1alpha1.AddOnConfig{
			{ref(adc, "ns", "first")}, {ref(adc, "ns", "second")},
		}, want: []string{
			"addondeploymentconfigs.addon.open-cluster-management.io/ns/second",
			"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
		}},
		{name: "the cluster's own configs win", placements: [][]addonv1alpha1.AddOnConfig{{ref(adc, "ns", "placement")}},
			mca: mca(ref(adc, "open-cluster-management", "cluster1-deploy-config")), want: []string{
				"addondeploymentconfigs.addon.open-cluster-management.io/open-cluster-management/cluster1-deploy-config",
				"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
			}},
		{name: "several of one kind replace all of it", placements: [][]addonv1alpha1.AddOnConfig{
			{ref(ex, "ns", "example-config-1"), ref(ex, "ns", "example-config-2")},
		}, want: []string{
			"addondeploymentconfigs.addon.open-cluster-management.io/open-cluster-management/default-deploy-config",
			"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
			"exampleconfigs.example.open-cluster-management.io/ns/example-config-1",
			"exampleconfigs.example.open-cluster-management.io/ns/example-config-2",
		}},
		{name: "an unsupported kind is kept and marked", mca: mca(ref(addonv1alpha1.ConfigGroupResource{Resource: "configmaps"}, "cluster1", "cm")), want: []string{
			"configmaps/cluster1/cm (unsupported)",
			"addondeploymentconfigs.addon.open-cluster-management.io/open-cluster-management/default-deploy-config",
			"addontemplates.addon.open-cluster-management.io//helloworld-0.0.1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(Resolve(cma, tt.placements, tt.mca))
			if len(got) != len(tt.want) {
				t.Fatalf("Resolve = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("Resolve[%d] = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSupports(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{
		{ConfigGroupResource: ex}, {ConfigGroupResource: adc},
	}}}
	for _, tt := range []struct {
		gr   addonv1alpha1.ConfigGroupResource
		want bool
	}{{adc, true}, {tmpl, true}, {ex, true}, {addonv1alpha1.ConfigGroupResource{Resource: "configmaps"}, false}} {
		if got := Supports(cma, tt.gr); got != tt.want {
			t.Errorf("Supports(%v) = %v, want %v", tt.gr, got, tt.want)
		}
	}
	if got, want := SupportedKinds(cma), []addonv1alpha1.ConfigGroupResource{ex, adc, tmpl}; !slices.Equal(got, want) {
		t.Errorf("SupportedKinds() = %v, want %v", got, want)
	}
	if got := SupportedKinds(&addonv1alpha1.ClusterManagementAddOn{}); !slices.Equal(got, BuiltinKinds) {
		t.Errorf("SupportedKinds() of an add-on listing none = %v, want the built-in kinds", got)
	}
}

func TestSpecHash(t *testing.T) {
	obj := func(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }
	a, _ := SpecHash(obj(map[string]any{"kind": "X", "metadata": map[string]any{"name": "a", "resourceVersion": "1"}, "spec": map[string]any{"x": 1, "y": "z"}}))
	b, _ := SpecHash(obj(map[string]any{"kind": "X", "metadata": map[string]any{"name": "b", "resourceVersion": "9"}, "spec": map[string]any{"y": "z", "x": 1}, "status": map[string]any{"s": 1}}))
	c, _ := SpecHash(obj(map[string]any{"kind": "X", "spec": map[string]any{"x": 2, "y": "z"}}))
	noSpec, _ := SpecHash(obj(map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}))
	noSpec2, _ := SpecHash(obj(map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "b"}, "data": map[string]any{"k": "w"}}))
	if a != b {
		t.Errorf("the same spec under other metadata and status hashes differently: %s %s", a, b)
	}
	if a == c {
		t.Error("different specs hash the same")
	}
	if noSpec == noSpec2 || len(a) != 64 {
		t.Errorf("hashes of objects without spec: %s %s", noSpec, noSpec2)
	}
	// The hex SHA-256 of {"spec":{"x":1,"y":"z"}} and of {"data":{"k":"v"}}.
	if want := "6a001ccd81c3d884634f8cd6753457800c093c8c979bb1ba44795cf7269809cc"; a != want {
		t.Errorf("SpecHash = %s, want %s", a, want)
	}
	if want := "8338386bc05b6a51ed41f42870cfc13b265df8ff411ce98a33e4786e7cd96be8"; noSpec != want {
		t.Errorf("SpecHash of an object without spec = %s, want %s", noSpec, want)
	}
}

func TestHashesAnnotation(t *testing.T) {
	h := Hashes{"b": "2", "a": "1"}
	if got := h.Annotation(); got != `{"a":"1","b":"2"}` {
		t.Errorf("Annotation = %s", got)
	}
	back := FromAnnotations(map[string]string{"open-cluster-management.io/config-spec-hash": h.Annotation()})
	if !back.Equal(h) {
		t.Errorf("round trip = %v, want %v", back, h)
	}
	if len(FromAnnotations(map[string]string{"open-cluster-management.io/config-spec-hash": "{"})) != 0 {
		t.Error("a malformed annotation decodes as configurations")
	}
	desired := Desired(&addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{
		{ConfigGroupResource: adc, DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ns", Name: "d"}, SpecHash: "h"}},
		{ConfigGroupResource: ex},
	}}})
	if !desired.Equal(Hashes{"addondeploymentconfigs.addon.open-cluster-management.io/ns/d": "h"}) {
		t.Errorf("Desired = %v", desired)
	}
}

// TestSpecHashIsOCMs pins the hash addon-framework writes for an
// AddOnDeploymentConfig as served at v1beta1: {"spec": ...} hashed whole.
func TestSpecHashIsOCMs(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "AddOnDeploymentConfig",
		"metadata": map[string]any{"name": "global", "namespace": "open-cluster-management", "generation": int64(1)},
		"spec":     map[string]any{"agentInstallNamespace": "open-cluster-management-agent-addon", "proxyConfig": map[string]any{}},
	}}
	got, err := SpecHash(obj)
	if err != nil {
		t.Fatal(err)
	}
	if want := "609cd38f2a3758971cab4e17106f5040c4c76eeafa834b67f30f6a984af04c12"; got != want {
		t.Errorf("SpecHash = %s, want addon-framework's %s", got, want)
	}
	for gr, version := range map[addonv1alpha1.ConfigGroupResource]string{adc: "v1beta1", tmpl: "v1alpha1", ex: ""} {
		gvk, ok := HashedVersion(gr)
		if gvk.Version != version || ok != (version != "") {
			t.Errorf("HashedVersion(%s) = %v, %v; want version %q", gr.Resource, gvk, ok, version)
		}
	}
	if gvk := BuiltinKind("addondeploymentconfigs"); gvk.Version != "v1beta1" || gvk.Kind != "AddOnDeploymentConfig" {
		t.Errorf("BuiltinKind(addondeploymentconfigs) = %v", gvk)
	}
}
