package join

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// completeWith parses args as join's flags and completes the options,
// contacting no cluster.
func completeWith(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o := NewOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
	cmd := &cobra.Command{Use: "join"}
	o.AddFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return o, o.Complete(cmd, nil)
}

// TestValuesFile checks that join takes the klusterlet chart's values from
// --values-file (or --klusterlet-values-file), a flag given winning, and
// renders the values no flag has into the operator and the Klusterlet.
func TestValuesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(`
images: {registry: registry.example.com/ocm, tag: v1.2.3}
klusterlet:
  clusterName: from-file
  mode: Singleton
  registrationConfiguration: {clientCertExpirationSeconds: 7200}
  tlsProfile: {minTLSVersion: VersionTLS13}
priorityClassName: high
operator:
  priorityClassName: higher
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := completeWith(t, "--klusterlet-values-file", path, "--cluster-name", "from-flag", "--client-cert-expiration-seconds", "3600")
	if err != nil {
		t.Fatal(err)
	}
	if o.ClusterName != "from-flag" || o.ClientCertExpirationSeconds != 3600 {
		t.Errorf("cluster name %q, expiration %d: want the flags'", o.ClusterName, o.ClientCertExpirationSeconds)
	}
	if !o.Singleton || o.TLSMinVersion != "VersionTLS13" || o.Image != "registry.example.com/ocm/ocm-controller:v1.2.3" {
		t.Errorf("singleton %v, TLS %q, image %q: want the file's", o.Singleton, o.TLSMinVersion, o.Image)
	}
	o.HubToken, o.HubAPIServer, o.CACertHashes = "token", "https://hub.example.com:6443", []string{testPin}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			if pc, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "priorityClassName"); pc != "higher" {
				t.Errorf("operator priorityClassName %q, want operator.priorityClassName", pc)
			}
		case "Klusterlet":
			if pc, _, _ := unstructured.NestedString(obj.Object, "spec", "priorityClassName"); pc != "high" {
				t.Errorf("Klusterlet spec.priorityClassName %q, want priorityClassName", pc)
			}
		}
	}

	_, err = completeWith(t, "--values-file", path, "--klusterlet-values-file", path)
	assert.ErrorContains(t, err, "give one of them", "both flags")
	o, err = completeWith(t, "--values-file", path, "--mode", "hosted", "--managed-cluster-kubeconfig", "m.kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	o.HubToken, o.HubAPIServer, o.CACertHashes = "token", "https://hub.example.com:6443", []string{testPin}
	assert.ErrorContains(t, o.Validate(), "--mode hosted", "hosted mode with the agent's priorityClassName")
}
