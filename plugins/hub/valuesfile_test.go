package hub

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// TestInitValuesFile checks that `hub init --values-file` renders the hub
// chart's values, a flag given winning over the file's value.
func TestInitValuesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(`
images: {registry: registry.example.com/ocm, tag: v1.2.3}
nodeSelector: {infra: "true"}
priorityClassName: high
clusterManager:
  registrationConfiguration: {autoApproveUsers: [alice]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs([]string{"init", "--dry-run", "-o", "yaml", "--cluster-manager-values-file", path, "--auto-approved-csr-identities", "bob"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub init --dry-run: %v", err)
	}
	objs, err := config.DecodeDocuments(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			seen++
			spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
			if spec["priorityClassName"] != "high" || spec["nodeSelector"].(map[string]any)["infra"] != "true" {
				t.Errorf("operator Pod spec %v lacks the file's priorityClassName and nodeSelector", spec)
			}
			if img := spec["containers"].([]any)[0].(map[string]any)["image"]; img != "registry.example.com/ocm/ocm-controller:v1.2.3" {
				t.Errorf("operator image %v, want the file's", img)
			}
		case "ClusterManager":
			seen++
			if ns, _, _ := unstructured.NestedString(obj.Object, "spec", "nodePlacement", "nodeSelector", "infra"); ns != "true" {
				t.Error("the ClusterManager lacks the file's nodeSelector")
			}
			if users, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "registrationConfiguration", "autoApproveUsers"); len(users) != 1 || users[0] != "bob" {
				t.Errorf("autoApproveUsers %v, want the flag's [bob]", users)
			}
		}
	}
	if seen != 2 {
		t.Errorf("saw %d of the operator Deployment and the ClusterManager", seen)
	}
}
