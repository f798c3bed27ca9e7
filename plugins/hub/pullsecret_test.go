package hub

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// runInit runs `hub init` with args against no cluster.
func runInit(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs(append([]string{"init"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestInitImagePullCredentials checks --image-pull-credentials: the
// Secret is printed with the manifests, before the operator's Deployment,
// and --output-file becomes owner-only; a bad file is refused naming it and
// the problem, before anything else happens.
func TestInitImagePullCredentials(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "config.json")
	const auths = `{"auths":{"registry.example:5000":{"auth":"dTpw"}}}`
	if err := os.WriteFile(good, []byte(auths), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runInit(t, "--dry-run", "-o", "yaml", "--image-pull-credentials", good)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := config.DecodeDocuments([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	secretAt, deploymentAt := -1, -1
	for i, obj := range objs {
		switch {
		case obj.GetKind() == "Secret" && obj.GetName() == pullsecret.Name:
			secretAt = i
			s := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, s); err != nil {
				t.Fatal(err)
			}
			if s.Namespace != config.OperatorNamespace || s.Type != corev1.SecretTypeDockerConfigJson || string(s.Data[corev1.DockerConfigJsonKey]) != auths ||
				s.Labels[apply.PartOfLabelKey] != apply.PartOfLabelValue {
				t.Errorf("Secret %s/%s type %s data %s labels %v", s.Namespace, s.Name, s.Type, s.Data[corev1.DockerConfigJsonKey], s.Labels)
			}
		case obj.GetKind() == "Deployment":
			deploymentAt = i
		}
	}
	if secretAt < 0 || deploymentAt < secretAt {
		t.Errorf("the Secret is at %d, the operator's Deployment at %d: want the Secret printed, before", secretAt, deploymentAt)
	}

	file := filepath.Join(dir, "hub.yaml")
	if _, err := runInit(t, "--dry-run", "--output-file", file, "--image-pull-credentials", good); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("--output-file with credentials: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.json"), "missing.json"},
		{empty, `empty.json have no registry under "auths"`},
		{file, "hub.yaml are not a docker config.json"},
	} {
		// No --dry-run: a failure of validation comes before any request
		// to the cluster, which does not exist.
		_, err := runInit(t, "--image-pull-credentials", tt.file)
		assert.ErrorContains(t, err, "--image-pull-credentials", "the error names the flag")
		assert.ErrorContains(t, err, tt.want, "--image-pull-credentials %s", tt.file)
	}
}
