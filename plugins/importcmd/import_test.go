package importcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
)

const tokenKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.2:6443", certificate-authority: ca.crt}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

const execKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.2:6443"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// run runs import with args against a hub that does not exist (a client
// dry run and the checks before it send nothing).
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = ptr.To(filepath.Join(t.TempDir(), "none"))
	cmd := NewCmdImport(flags, streams, nil)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportDryRun(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ca.crt", "MY-CA")
	kc := writeFile(t, dir, "kubeconfig", tokenKubeconfig)
	out, err := run(t, "cluster2", "--managed-cluster-kubeconfig", kc, "--dry-run=client", "-o", "yaml", "--keep-secret")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: ManagedCluster", "name: cluster2", "kind: Secret", "name: auto-import-secret", "namespace: cluster2",
		"keeping-auto-import-secret: \"true\"", "kind: Namespace", "keep it encrypted"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run printed no %q:\n%s", want, out)
		}
	}
	// With --values-file the import configuration comes before the import
	// Secret, which starts the import.
	values := writeFile(t, dir, "values.yaml", "klusterlet: {registrationConfiguration: {registrationDriver: {authType: token}}}\n")
	withValues, err := run(t, "cluster2", "--managed-cluster-kubeconfig", kc, "--values-file", values, "--dry-run=client", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(withValues, "name: cluster-import-config"), strings.Index(withValues, "name: auto-import-secret"); i < 0 || j < i {
		t.Errorf("the dry run printed no import configuration before the import Secret:\n%s", withValues)
	}
	// The CA file's content travels in the Secret, the file name does not.
	if strings.Contains(out, "ca.crt\n") || strings.Contains(out, "certificate-authority:") {
		t.Errorf("the Secret names a file of this machine:\n%s", out)
	}
}

func TestImportRefuses(t *testing.T) {
	dir := t.TempDir()
	execFile := writeFile(t, dir, "exec", execKubeconfig)
	writeFile(t, dir, "ca.crt", "MY-CA")
	tokenFile := writeFile(t, dir, "kubeconfig", tokenKubeconfig)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no kubeconfig", []string{"cluster2"}, "--managed-cluster-kubeconfig is required"},
		{"a bad name", []string{"Cluster_2", "--managed-cluster-kubeconfig", execFile}, "cluster name"},
		{"an exec credential", []string{"cluster2", "--managed-cluster-kubeconfig", execFile}, "uses exec"},
		{"a missing file", []string{"cluster2", "--managed-cluster-kubeconfig", filepath.Join(dir, "nope")}, "read --managed-cluster-kubeconfig"},
		{"an unknown context", []string{"cluster2", "--managed-cluster-kubeconfig", execFile, "--managed-cluster-context", "x"}, `no context "x"`},
		{"wait with a dry run", []string{"cluster2", "--managed-cluster-kubeconfig", execFile, "--dry-run=client", "--wait"}, "exclude --dry-run"},
		{"-o without a dry run", []string{"cluster2", "--managed-cluster-kubeconfig", execFile, "-o", "yaml"}, "add --dry-run=client"},
		{"values for another cluster", []string{"cluster2", "--managed-cluster-kubeconfig", tokenFile, "--values-file", writeFile(t, dir, "v1.yaml", "klusterlet: {clusterName: cluster1}")},
			`--values-file ` + filepath.Join(dir, "v1.yaml") + `: klusterlet.clusterName "cluster1"`},
		{"values with an unknown key", []string{"cluster2", "--managed-cluster-kubeconfig", tokenFile, "--values-file", writeFile(t, dir, "v2.yaml", "hub: {}")}, "unknown key hub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			assert.ErrorContains(t, err, tc.want, out)
		})
	}
}
