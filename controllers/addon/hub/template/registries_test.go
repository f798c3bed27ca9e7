package template

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

func TestParseClusterImageRegistries(t *testing.T) {
	tests := []struct {
		name, value string
		want        []addonv1alpha1.ImageMirror
		wantErr     string
	}{
		{name: "empty", value: ""},
		{name: "OCM's document", value: `{"pullSecret":"open-cluster-management.pull","registries":[{"mirror":"mirror.local/ocm","source":"quay.io/open-cluster-management"},{"mirror":"mirror.local/all"}]}`,
			want: []addonv1alpha1.ImageMirror{{Mirror: "mirror.local/ocm", Source: "quay.io/open-cluster-management"}, {Mirror: "mirror.local/all"}}},
		{name: "not JSON", value: `registries: [mirror.local]`, wantErr: "is not a JSON document of image mirrors"},
		{name: "a list", value: `[{"mirror":"m"}]`, wantErr: "is not a JSON document of image mirrors"},
		{name: "registries of the wrong type", value: `{"registries":"mirror.local"}`, wantErr: "is not a JSON document of image mirrors"},
		{name: "two documents", value: `{"registries":[]} {}`, wantErr: "more than one JSON document"},
		{name: "an entry without mirror", value: `{"registries":[{"source":"quay.io"}]}`, wantErr: "registries[0] has no mirror"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseClusterImageRegistries(tt.value)
			switch {
			case tt.wantErr != "":
				assert.ErrorContains(t, err, tt.wantErr)
				assert.ErrorContains(t, err, `{"registries":[{"mirror":`, "the error shows an example")
			case err != nil:
				t.Fatal(err)
			case len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)):
				t.Errorf("mirrors %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClusterRegistries checks that the cluster's mirrors rewrite the
// agent's images and that an AddOnDeploymentConfig's win for an image both
// rewrite.
func TestClusterRegistries(t *testing.T) {
	cluster := []addonv1alpha1.ImageMirror{
		{Source: "quay.io/open-cluster-management", Mirror: "cluster.local/ocm"},
		{Source: "docker.io/library", Mirror: "cluster.local/library"},
	}
	images := func(in Input) []string {
		t.Helper()
		ds := objects(t, mustRender(t, in).Manifests)[0]
		spec := &struct {
			Spec struct {
				Template struct{ Spec corev1.PodSpec } `json:"template"`
			} `json:"spec"`
		}{}
		if err := jsonRoundTrip(ds.Object, spec); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range spec.Spec.Template.Spec.Containers {
			out = append(out, c.Image)
		}
		return out
	}
	in := newTemplate(t, daemonSet).input()
	in.ClusterRegistries = cluster
	if got, want := images(in), []string{"cluster.local/ocm/ds:v1", "cluster.local/library/busybox:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the cluster's mirrors: images %v, want %v", got, want)
	}
	in = newTemplate(t, daemonSet).input(adc(addonv1alpha1.AddOnDeploymentConfigSpec{Registries: []addonv1alpha1.ImageMirror{
		{Source: "quay.io/open-cluster-management", Mirror: "config.local/ocm"}}}))
	in.ClusterRegistries = cluster
	if got, want := images(in), []string{"config.local/ocm/ds:v1", "cluster.local/library/busybox:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the cluster's and a config's mirrors: images %v, want %v", got, want)
	}
}
