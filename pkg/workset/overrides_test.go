package workset

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stretchr/testify/assert"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// configMap is a raw ConfigMap manifest.
func configMap(ns, name, value string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"data":{"v":"` + value + `"}}`)}}
}

// manifestPatch builds a ManifestPatch of the ConfigMap ns/name.
func manifestPatch(id workv1alpha1.ManifestResourceIdentifier, mergePatch string) workv1alpha1.ManifestPatch {
	return workv1alpha1.ManifestPatch{ResourceIdentifier: id, MergePatch: runtime.RawExtension{Raw: []byte(mergePatch)}}
}

var cmID = workv1alpha1.ManifestResourceIdentifier{Resource: "configmaps", Namespace: "app", Name: "cfg"}

// value returns data.v of the manifest i of spec.
func value(t *testing.T, spec *workv1.ManifestWorkSpec, i int) string {
	t.Helper()
	var obj struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(spec.Workload.Manifests[i].Raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Data["v"]
}

func TestOverrides(t *testing.T) {
	template := workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
		configMap("app", "cfg", "base"), configMap("app", "other", "base"),
	}}}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	tests := []struct {
		name      string
		overrides []workv1alpha1.ManifestWorkOverride
		cluster   string
		labels    map[string]string
		want      []string // data.v of each manifest
		wantErr   string
	}{
		{name: "no override", cluster: "c1", want: []string{"base", "base"}},
		{name: "by name", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":"one"}}`)}}},
			want: []string{"one", "base"}},
		{name: "other cluster untouched", cluster: "c2", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":"one"}}`)}}},
			want: []string{"base", "base"}},
		{name: "by label, kind identifier", cluster: "c3", labels: map[string]string{"env": "prod"}, overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterSelector: prod, Patches: []workv1alpha1.ManifestPatch{manifestPatch(workv1alpha1.ManifestResourceIdentifier{Kind: "ConfigMap", Namespace: "app", Name: "other"}, `{"data":{"v":"prod"}}`)}}},
			want: []string{"base", "prod"}},
		{name: "in order: later wins", cluster: "c1", labels: map[string]string{"env": "prod"}, overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterSelector: prod, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":"prod"}}`)}},
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":"one"}}`)}}},
			want: []string{"one", "base"}},
		{name: "null removes", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":null}}`)}}},
			want: []string{"", "base"}},
		{name: "no manifest matches", cluster: "c9", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(workv1alpha1.ManifestResourceIdentifier{Resource: "secrets", Namespace: "app", Name: "cfg"}, `{}`)}}},
			wantErr: "overrides[0].patches[0]: no manifest of the template matches core/secrets/app/cfg"},
		{name: "not JSON", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":`)}}},
			wantErr: "overrides[0].patches[0].mergePatch must be a JSON object"},
		{name: "not an object", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `[1]`)}}},
			wantErr: "mergePatch must be a JSON object"},
		{name: "identity change", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"metadata":{"name":"x"}}`)}}},
			wantErr: "must not change the apiVersion, kind, name or namespace"},
		{name: "bad selector", cluster: "c1", overrides: []workv1alpha1.ManifestWorkOverride{
			{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}},
				Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{}`)}}},
			wantErr: "overrides[0].clusterSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: *template.DeepCopy(), Overrides: tt.overrides}
			o, err := NewOverrider(spec)
			if err == nil {
				var got *workv1.ManifestWorkSpec
				got, _, err = o.SpecFor(tt.cluster, tt.labels)
				if err == nil {
					for i, w := range tt.want {
						if v := value(t, got, i); v != w {
							t.Errorf("manifest %d data.v = %q, want %q", i, v, w)
						}
					}
					if value(t, &spec.ManifestWorkTemplate, 0) != "base" {
						t.Error("the template was modified")
					}
				}
			}
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestSpecHashDiffersPerOverride(t *testing.T) {
	spec := &workv1alpha1.ManifestWorkReplicaSetSpec{
		ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("app", "cfg", "base")}}},
		Overrides: []workv1alpha1.ManifestWorkOverride{{ClusterNames: []string{"c1"},
			Patches: []workv1alpha1.ManifestPatch{manifestPatch(cmID, `{"data":{"v":"one"}}`)}}},
	}
	o, err := NewOverrider(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, h1, _ := o.SpecFor("c1", nil)
	_, h2, _ := o.SpecFor("c2", nil)
	_, h3, _ := o.SpecFor("c3", nil)
	if h1 == h2 || h2 != h3 || h1 == "" {
		t.Errorf("hashes c1=%s c2=%s c3=%s: want c1 different, c2 = c3", h1, h2, h3)
	}
}
