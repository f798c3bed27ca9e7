package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

func TestInitValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*InitOptions)
		wantErr string
	}{
		{"defaults", func(*InitOptions) {}, ""},
		{"dry run yaml", func(o *InitOptions) { o.DryRun, o.Output = "client", "yaml" }, ""},
		{"server dry run", func(o *InitOptions) { o.DryRun = "server" }, ""},
		{"server dry run with output", func(o *InitOptions) { o.DryRun, o.Output = "server", "yaml" }, "--output"},
		{"unknown dry run", func(o *InitOptions) { o.DryRun = "true" }, "--dry-run"},
		{"bad cluster name", func(o *InitOptions) { o.ClusterName = "Bad_Name" }, "--cluster-name"},
		{"join info as yaml", func(o *InitOptions) { o.Output = "yaml" }, ""},
		{"table without dry run", func(o *InitOptions) { o.Output = "wide" }, "--output"},
		{"table with dry run", func(o *InitOptions) { o.DryRun, o.Output = "client", "wide" }, "--output"},
		{"wait with dry run", func(o *InitOptions) { o.DryRun, o.Wait = "client", true }, "--wait"},
		{"short token", func(o *InitOptions) { o.TokenDuration = time.Minute }, "--duration"},
		{"image", func(o *InitOptions) { o.Image = "example.com/ocm-controller:v1" }, ""},
		{"image registry", func(o *InitOptions) { o.ImageRegistry = "registry.example.com/mirror" }, ""},
		{"invalid image", func(o *InitOptions) { o.Image = "example.com/OCM:v1" }, "--image"},
		{"invalid image registry", func(o *InitOptions) { o.ImageRegistry = "quay.io/org:v1" }, "--image-registry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewInitOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Timeout, o.TokenDuration = time.Minute, time.Hour
			tt.mutate(o)
			err := o.Validate()
			if (err != nil) != (tt.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestInitImage checks which image init deploys: the image of its own
// version in --image-registry, unless --image names one.
func TestInitImage(t *testing.T) {
	tag := version.ImageTag(version.Version)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, config.DefaultImageRegistry + "/ocm-controller:" + tag},
		{"registry", []string{"--image-registry", "registry.example.com/mirror"}, "registry.example.com/mirror/ocm-controller:" + tag},
		{"image wins", []string{"--image-registry", "registry.example.com/mirror", "--image", "example.com/ocm-controller:v1"}, "example.com/ocm-controller:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			flags := genericclioptions.NewConfigFlags(false)
			nowhere := "/nonexistent/kubeconfig"
			flags.KubeConfig = &nowhere
			cmd := NewCmdHub(flags, streams)
			cmd.SetArgs(append([]string{"init", "--dry-run", "-o", "yaml"}, tt.args...))
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("hub init --dry-run: %v", err)
			}
			if got := strings.Count(out.String(), "image: "+tt.want+"\n"); got != 1 {
				t.Errorf("image %s appears %d times in the manifests, want once", tt.want, got)
			}
			if strings.Contains(out.String(), ":latest") {
				t.Error("the manifests name a latest tag")
			}
		})
	}
}

// TestInitDryRun checks that `hub init --dry-run -o yaml` prints the
// ClusterManager operator and the ClusterManager, every
// object labeled part-of kubectl-ocm, without any cluster: the
// kubeconfig points nowhere.
func TestInitDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs([]string{"init", "--dry-run", "-o", "yaml", "--image", "example.com/ocm-controller:v1", "--auto-approved-csr-identities", "system:bootstrap:abc"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub init --dry-run: %v", err)
	}
	want, err := config.HubOperatorObjects(config.HubOperatorValues{})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != len(want) {
		t.Fatalf("printed %d documents, want %d", len(docs), len(want))
	}
	for _, doc := range docs {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decode printed document: %v", err)
		}
		if obj.Kind != "CustomResourceDefinition" && obj.Metadata.Labels[config.PartOfLabelKey] != config.PartOfLabelValue {
			t.Errorf("%s %s lacks label %s=%s", obj.Kind, obj.Metadata.Name, config.PartOfLabelKey, config.PartOfLabelValue)
		}
	}
	for _, s := range []string{"image: example.com/ocm-controller:v1", "- system:bootstrap:abc", "name: POD_NAMESPACE"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("dry run output lacks %q", s)
		}
	}
}
