package v1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestAppliedManifestWorkName(t *testing.T) {
	tests := []struct {
		name     string
		hubHash  string
		amwName  string
		wantWork string
		wantOK   bool
	}{
		{name: "own hub", hubHash: "abc", amwName: "abc-mw-01", wantWork: "mw-01", wantOK: true},
		{name: "work name with dashes", hubHash: "abc", amwName: "abc-a-b-c", wantWork: "a-b-c", wantOK: true},
		{name: "other hub", hubHash: "abc", amwName: "def-mw-01"},
		{name: "prefix only", hubHash: "abc", amwName: "abc-"},
		{name: "no hub hash", hubHash: "", amwName: "-mw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work, ok := ParseAppliedManifestWorkName(tt.hubHash, tt.amwName)
			if work != tt.wantWork || ok != tt.wantOK {
				t.Fatalf("ParseAppliedManifestWorkName(%q, %q) = %q, %v; want %q, %v",
					tt.hubHash, tt.amwName, work, ok, tt.wantWork, tt.wantOK)
			}
			if ok {
				if got := AppliedManifestWorkName(tt.hubHash, work); got != tt.amwName {
					t.Errorf("AppliedManifestWorkName(%q, %q) = %q, want %q", tt.hubHash, work, got, tt.amwName)
				}
			}
		})
	}
}

func TestFindManifestConfig(t *testing.T) {
	deploy := ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "web"}
	ns := ResourceIdentifier{Resource: "namespaces", Name: "web"}
	spec := ManifestWorkSpec{ManifestConfigs: []ManifestConfigOption{
		{ResourceIdentifier: deploy, FeedbackScrapeType: FeedbackWatchType},
		{ResourceIdentifier: ns, UpdateStrategy: &UpdateStrategy{Type: UpdateStrategyTypeReadOnly}},
	}}
	tests := []struct {
		name       string
		meta       ManifestResourceMeta
		want       *ResourceIdentifier
		wantString string
	}{
		{name: "namespaced match", meta: ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment",
			Resource: "deployments", Namespace: "default", Name: "web"}, want: &deploy, wantString: "apps/deployments/default/web"},
		{name: "cluster-scoped core match", meta: ManifestResourceMeta{Version: "v1", Kind: "Namespace",
			Resource: "namespaces", Name: "web"}, want: &ns, wantString: "core/namespaces/web"},
		{name: "other namespace", meta: ManifestResourceMeta{Group: "apps", Resource: "deployments",
			Namespace: "other", Name: "web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := spec.FindManifestConfig(tt.meta)
			if tt.want == nil {
				if got != nil {
					t.Fatalf("FindManifestConfig() = %+v, want nil", got)
				}
				return
			}
			if got == nil || got.ResourceIdentifier != *tt.want {
				t.Fatalf("FindManifestConfig() = %+v, want %+v", got, tt.want)
			}
			if s := got.ResourceIdentifier.String(); s != tt.wantString {
				t.Errorf("String() = %q, want %q", s, tt.wantString)
			}
		})
	}
}

func TestPropagationPolicy(t *testing.T) {
	tests := []struct {
		name   string
		option *DeleteOption
		want   DeletePropagationPolicyType
	}{
		{name: "unset", want: DeletePropagationPolicyTypeForeground},
		{name: "empty policy", option: &DeleteOption{}, want: DeletePropagationPolicyTypeForeground},
		{name: "orphan", option: &DeleteOption{PropagationPolicy: DeletePropagationPolicyTypeOrphan},
			want: DeletePropagationPolicyTypeOrphan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := ManifestWorkSpec{DeleteOption: tt.option}
			if got := spec.PropagationPolicy(); got != tt.want {
				t.Errorf("PropagationPolicy() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestManifestKey(t *testing.T) {
	tests := []struct {
		name                           string
		apiVersion, kind, ns, manifest string
		want                           string
	}{
		{"core, namespaced", "v1", "ConfigMap", "default", "cm", "ConfigMap default/cm"},
		{"core, cluster-scoped", "v1", "Namespace", "", "app", "Namespace app"},
		{"group", "apps/v1", "Deployment", "default", "web", "Deployment.apps default/web"},
		{"the version does not count", "apps/v1beta2", "Deployment", "default", "web", "Deployment.apps default/web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ManifestKey(tt.apiVersion, tt.kind, tt.ns, tt.manifest); got != tt.want {
				t.Errorf("ManifestKey = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTakeOverRuleOf(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		want        TakeOverRule
		err         bool
	}{
		{nil, TakeOverAlways, false},
		{map[string]string{TakeOverAnnotation: "IfNoDiff"}, TakeOverIfNoDiff, false},
		{map[string]string{TakeOverAnnotation: "Never"}, TakeOverNever, false},
		{map[string]string{TakeOverAnnotation: "Always"}, TakeOverAlways, false},
		{map[string]string{TakeOverAnnotation: "never"}, "", true},
		{map[string]string{TakeOverAnnotation: ""}, "", true},
	} {
		got, err := TakeOverRuleOf(tc.annotations)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("TakeOverRuleOf(%v) = %q, %v; want %q, error %t", tc.annotations, got, err, tc.want, tc.err)
		}
	}
}

func TestManifestResourceMeta(t *testing.T) {
	tests := []struct {
		name     string
		manifest Manifest
		want     ManifestResourceMeta
		wantErr  string
	}{
		{"core", Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"cm"}}`)}},
			ManifestResourceMeta{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cm"}, ""},
		{"group", Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"default","name":"web"},"spec":{"replicas":2}}`)}},
			ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}, ""},
		{"object", Manifest{RawExtension: runtime.RawExtension{Object: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "reader"}}}}},
			ManifestResourceMeta{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}, ""},
		{"not JSON", Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`kind: ConfigMap`)}}, ManifestResourceMeta{}, "decode manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.manifest.ResourceMeta()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, ManifestKey(tt.want.Group+"/"+tt.want.Version, tt.want.Kind, tt.want.Namespace, tt.want.Name), got.Key())
		})
	}
}

func TestDeleteOptionOrphans(t *testing.T) {
	id := ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "web"}
	selective := func(rules ...OrphaningRule) *DeleteOption {
		return &DeleteOption{PropagationPolicy: DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphan: &SelectivelyOrphan{OrphaningRules: rules}}
	}
	other := func(mutate func(r *OrphaningRule)) OrphaningRule {
		r := OrphaningRule(id)
		mutate(&r)
		return r
	}
	tests := []struct {
		name   string
		option *DeleteOption
		want   bool
	}{
		{name: "no delete option", want: false},
		{name: "empty policy", option: &DeleteOption{}, want: false},
		{name: "Foreground", option: &DeleteOption{PropagationPolicy: DeletePropagationPolicyTypeForeground}, want: false},
		{name: "Orphan", option: &DeleteOption{PropagationPolicy: DeletePropagationPolicyTypeOrphan}, want: true},
		{name: "SelectivelyOrphan without rules", option: &DeleteOption{PropagationPolicy: DeletePropagationPolicyTypeSelectivelyOrphan}, want: false},
		{name: "SelectivelyOrphan listed", option: selective(OrphaningRule(id)), want: true},
		{name: "SelectivelyOrphan among others", option: selective(other(func(r *OrphaningRule) { r.Name = "db" }), OrphaningRule(id)), want: true},
		{name: "other group", option: selective(other(func(r *OrphaningRule) { r.Group = "" })), want: false},
		{name: "other resource", option: selective(other(func(r *OrphaningRule) { r.Resource = "replicasets" })), want: false},
		{name: "other namespace", option: selective(other(func(r *OrphaningRule) { r.Namespace = "apps" })), want: false},
		{name: "other name", option: selective(other(func(r *OrphaningRule) { r.Name = "db" })), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.option.Orphans(id))
		})
	}
}
