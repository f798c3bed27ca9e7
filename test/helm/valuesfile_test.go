package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
)

// valuesFiles are the values files one chart and its verb both take: one
// per chart that sets every value the verb applies, the examples of
// docs/install.md and the values files of make demo.
var valuesFiles = []struct{ chart, file string }{
	{"hub", "testdata/hub-every-value.yaml"},
	{"hub", "../../examples/values/hub.yaml"},
	{"klusterlet", "testdata/klusterlet-every-value.yaml"},
	{"klusterlet", "../../examples/values/klusterlet.yaml"},
	{"hub", "../../examples/values/sandbox-hub.yaml"},
	{"klusterlet", "../../examples/values/sandbox-klusterlet.yaml"},
}

// TestOneValuesFile checks that one values file installs the same objects
// through the chart (`helm template -f FILE`) as through its verb
// (`kubectl ocm hub init --values-file FILE`, `kubectl ocm join
// --values-file FILE`).
func TestOneValuesFile(t *testing.T) {
	for _, tt := range valuesFiles {
		t.Run(tt.chart+" "+filepath.Base(tt.file), func(t *testing.T) {
			// A file without images.tag runs each side's own version, the
			// chart's appVersion and the verb's build: name that one.
			var args []string
			if img := imageOf(t, tt.file); img.Tag == "" {
				args = append(args, "--image", img.Registry+"/ocm-controller:"+appVersion(t, tt.chart))
			}
			switch tt.chart {
			case "hub":
				out, err := helmTemplateFile(t, "hub", tt.file, nil)
				require.NoError(t, err, out)
				compare(t, out, hubInit(t, append(args, "--values-file", tt.file)...))
			case "klusterlet":
				const server, token = "https://hub.example.com:6443", "abcdef.0123456789abcdef"
				ca := []byte("CA")
				bootstrap, err := kubeconfig.ForToken(server, ca, token)
				require.NoError(t, err)
				out, err := helmTemplateFile(t, "klusterlet", tt.file, map[string]string{"bootstrapHubKubeConfig": string(bootstrap)})
				require.NoError(t, err, out)
				compare(t, out, joinObjects(t, server, ca, append(args, "--values-file", tt.file, "--hub-apiserver", server, "--hub-token", token,
					"--ca-cert-hash", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")...))
			}
		})
	}
}

// joinObjects returns the objects `kubectl ocm join` with args writes for
// the hub at server with CA ca, contacting no cluster.
func joinObjects(t *testing.T, server string, ca []byte, args ...string) []*unstructured.Unstructured {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	o := join.NewOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	cmd := &cobra.Command{Use: "join"}
	o.AddFlags(cmd)
	require.NoError(t, cmd.ParseFlags(args))
	require.NoError(t, o.Complete(cmd, nil), "join %v", args)
	require.NoError(t, o.Validate(), "join %v", args)
	objs, err := o.Objects(server, ca)
	require.NoError(t, err)
	return objs
}

// helmTemplateFile runs `helm template ocm <chart> -f <file> [--set-file
// ...]` and returns what it prints.
func helmTemplateFile(t *testing.T, chart, file string, files map[string]string) (string, error) {
	t.Helper()
	home := helmHome(t)
	args := []string{"template", "ocm", chartDir(chart), "--values", file}
	for key, content := range files {
		path := filepath.Join(home, key)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		args = append(args, "--set-file", key+"="+path)
	}
	return runHelm(t, args...)
}

// imageOf returns the images values of a values file, the registry
// defaulting to the charts'.
func imageOf(t *testing.T, file string) (img struct{ Registry, Tag string }) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var values struct {
		Images struct {
			Registry string `json:"registry"`
			Tag      string `json:"tag"`
		} `json:"images"`
	}
	require.NoError(t, yaml.Unmarshal(data, &values))
	img.Registry, img.Tag = values.Images.Registry, values.Images.Tag
	if img.Registry == "" {
		img.Registry = "quay.io/kubectl-ocm"
	}
	return img
}

// appVersion is the appVersion of chart name.
func appVersion(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(name), "Chart.yaml"))
	require.NoError(t, err)
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	require.NoError(t, yaml.Unmarshal(data, &meta))
	return meta.AppVersion
}

// TestDocsExample checks that the example of docs/install.md's "One values
// file" section is examples/values/hub.yaml, which TestOneValuesFile runs.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "install.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "\n## One values file for the CLI, Helm and GitOps\n")
	require.True(t, ok, "docs/install.md has no section One values file for the CLI, Helm and GitOps")
	_, block, ok := strings.Cut(section, "\n```yaml\n")
	require.True(t, ok, "the section has no yaml block")
	block, _, _ = strings.Cut(block, "\n```\n")
	file, err := os.ReadFile(filepath.Join("..", "..", "examples", "values", "hub.yaml"))
	require.NoError(t, err)
	var inDoc, inFile any
	require.NoError(t, yaml.Unmarshal([]byte(block), &inDoc))
	require.NoError(t, yaml.Unmarshal(file, &inFile))
	require.Equal(t, inFile, inDoc, "the example in docs/install.md differs from examples/values/hub.yaml")
}
