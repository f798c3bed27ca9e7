package join

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// parsed returns the options of `kubectl ocm join args...`, completed, and
// the error of Validate.
func parsed(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o := NewOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
	cmd := &cobra.Command{Use: "join"}
	o.AddFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(cmd, nil); err != nil {
		t.Fatal(err)
	}
	return o, o.Validate()
}

func TestStandbyHubFlags(t *testing.T) {
	o, err := parsed(t, "--cluster-name", "c1", "--ca-cert-hash", testPin,
		"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1",
		"--hub-apiserver", "https://hub2:6443", "--hub-token", "t2",
		"--hub-apiserver", "https://hub3:6443", "--hub-token", "t3", "--hub-connection-timeout-seconds", "300")
	if err != nil {
		t.Fatal(err)
	}
	if o.HubAPIServer != "https://hub1:6443" || o.HubToken != "t1" {
		t.Errorf("first hub %s %s, want https://hub1:6443 t1", o.HubAPIServer, o.HubToken)
	}
	if len(o.StandbyHubs) != 2 || o.StandbyHubs[0].APIServer != "https://hub2:6443" || o.StandbyHubs[1].Token != "t3" {
		t.Errorf("standby hubs %+v, want hub2/t2 and hub3/t3 in order", o.StandbyHubs)
	}
	if o.HubConnectionTimeoutSeconds != 300 {
		t.Errorf("timeout %d, want 300", o.HubConnectionTimeoutSeconds)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a token short", []string{"--hub-apiserver", "https://hub1:6443", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t1"}, "give one --hub-token per --hub-apiserver"},
		{"one CA file for two hubs", []string{"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t2", "--ca-file", "/dev/null"}, "--ca-file given once for 2 hubs"},
		{"the same hub twice", []string{"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1", "--hub-apiserver", "https://hub1:6443", "--hub-token", "t2"}, "is named twice"},
		{"an http standby", []string{"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1", "--hub-apiserver", "http://hub2:6443", "--hub-token", "t2"}, "(hub 2) is not an https URL"},
		{"a timeout too short", []string{"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t2", "--hub-connection-timeout-seconds", "60"}, "below the minimum of 180"},
		{"a timeout without standby hubs", []string{"--hub-apiserver", "https://hub1:6443", "--hub-token", "t1", "--hub-connection-timeout-seconds", "600"}, "only applies with standby hubs"},
		{"add-hub with an install flag", []string{"--add-hub", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t2", "--image", "example.com/x:1"}, "--image does not apply with --add-hub"},
		{"add-hub without a token", []string{"--add-hub", "--hub-apiserver", "https://hub2:6443"}, "--add-hub needs --hub-apiserver and --hub-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsed(t, append([]string{"--cluster-name", "c1"}, tt.args...)...)
			require.ErrorContains(t, err, tt.want)
		})
	}
	if _, err := parsed(t, "--add-hub", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t2", "--ca-cert-hash", testPin, "--hub-connection-timeout-seconds", "180"); err != nil {
		t.Errorf("--add-hub with a hub, its pin and a timeout: %v", err)
	}
	_, err = parsed(t, "--add-hub", "--hub-apiserver", "https://hub2:6443", "--hub-token", "t2")
	assert.ErrorContains(t, err, "pass --ca-cert-hash", "--add-hub without a pin or CA file")
}

// TestObjectsWithStandbyHubs checks what join writes for a standby hub: its
// bootstrap kubeconfig in Secret bootstrap-hub-kubeconfig-2, listed after
// bootstrap-hub-kubeconfig in the Klusterlet with the timeout.
func TestObjectsWithStandbyHubs(t *testing.T) {
	o := validOptions()
	o.HubConnectionTimeoutSeconds = 240
	kc, err := kubeconfig.ForToken("https://hub2.example.com:6443", []byte("CA2"), "t2")
	if err != nil {
		t.Fatal(err)
	}
	o.standby = []config.StandbyHub{{Secret: config.StandbySecretName(2), Kubeconfig: kc}}
	objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	var secret, klusterlet *unstructured.Unstructured
	for _, obj := range objs {
		switch {
		case obj.GetKind() == "Secret" && obj.GetName() == "bootstrap-hub-kubeconfig-2":
			secret = obj
		case obj.GetKind() == "Klusterlet":
			klusterlet = obj
		}
	}
	if secret == nil || klusterlet == nil {
		t.Fatalf("join writes no Secret bootstrap-hub-kubeconfig-2 or no Klusterlet: %d objects", len(objs))
	}
	enc, _, _ := unstructured.NestedString(secret.Object, "data", kubeconfig.KubeconfigKey)
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	info, err := kubeconfig.FromSecret(map[string][]byte{kubeconfig.KubeconfigKey: raw})
	if err != nil || info.Server != "https://hub2.example.com:6443" || info.Token != "t2" {
		t.Errorf("standby bootstrap kubeconfig: %+v, %v; want hub2's server and token", info, err)
	}
	if secret.GetNamespace() != config.AgentNamespace {
		t.Errorf("standby Secret in namespace %q, want %s", secret.GetNamespace(), config.AgentNamespace)
	}
	b, _, _ := unstructured.NestedMap(klusterlet.Object, "spec", "registrationConfiguration", "bootstrapKubeConfigs")
	l, _ := b["localSecretsConfig"].(map[string]any)
	secrets, _ := l["kubeConfigSecrets"].([]any)
	if b["type"] != "LocalSecrets" || len(secrets) != 2 || fmt.Sprint(l["hubConnectionTimeoutSeconds"]) != "240" {
		t.Fatalf("Klusterlet bootstrapKubeConfigs = %v, want LocalSecrets of 2 Secrets with timeout 240", b)
	}
	if n := secrets[1].(map[string]any)["name"]; secrets[0].(map[string]any)["name"] != "bootstrap-hub-kubeconfig" || n != "bootstrap-hub-kubeconfig-2" {
		t.Errorf("Secrets listed %v, want bootstrap-hub-kubeconfig then bootstrap-hub-kubeconfig-2", secrets)
	}
}
