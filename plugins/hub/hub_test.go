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

func TestTokenAndCleanValidate(t *testing.T) {
	tests := []struct {
		name    string
		o       interface{ Validate() error }
		wantErr string
	}{
		{"token", &TokenOptions{Duration: time.Hour, DryRun: "none"}, ""},
		{"token client dry run", &TokenOptions{Duration: time.Hour, DryRun: "client"}, ""},
		{"token server dry run", &TokenOptions{Duration: time.Hour, DryRun: "server", ClusterName: "c1"}, ""},
		{"token unknown dry run", &TokenOptions{Duration: time.Hour, DryRun: "yes"}, "--dry-run yes is not supported"},
		{"token dry run and output", &TokenOptions{Duration: time.Hour, DryRun: "client", Output: "json"}, "--output and --dry-run exclude each other"},
		{"clean", &CleanOptions{Timeout: time.Minute, DryRun: "none"}, ""},
		{"clean server dry run", &CleanOptions{Timeout: time.Minute, DryRun: "server"}, ""},
		{"clean unknown dry run", &CleanOptions{Timeout: time.Minute, DryRun: "true"}, "--dry-run true is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if (err != nil) != (tt.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestTokenClientDryRun checks that `hub token --dry-run` says what it would
// create and whose token it would issue without any cluster: the
// kubeconfig points nowhere.
func TestTokenClientDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs([]string{"token", "--cluster-name", "cluster1", "--dry-run", "--duration", "1h"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub token --dry-run: %v", err)
	}
	for _, want := range []string{
		"ServiceAccount open-cluster-management/agent-registration-bootstrap-cluster1 applied (dry run)",
		"A token of ServiceAccount open-cluster-management/agent-registration-bootstrap-cluster1, valid for 1h0m0s, would be issued (dry run).",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "--hub-token") {
		t.Errorf("a dry run printed a join command:\n%s", out)
	}
}
