package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	helmcmd "helm.sh/helm/v4/pkg/cmd"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// chartDir is the directory of chart name in this source tree.
func chartDir(name string) string { return filepath.Join("..", "..", "config", "charts", name) }

// defaultImage is the image chart name runs with its default values: its
// appVersion is the tag, which a release sets to its version, as the verbs'
// default --image is the image of their own version.
func defaultImage(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(name), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil || meta.AppVersion == "" {
		t.Fatalf("chart %s: no appVersion in Chart.yaml (%v)", name, err)
	}
	return "quay.io/kubectl-ocm/ocm-controller:" + meta.AppVersion
}

// helmTemplate runs `helm template ocm <chart> -f <values> [--set-file ...]`
// with Helm's own command and returns what it prints.
func helmTemplate(t *testing.T, chart string, values map[string]any, files map[string]string) (string, error) {
	t.Helper()
	home := helmHome(t)
	args := []string{"template", "ocm", chartDir(chart)}
	if values != nil {
		data, err := yaml.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(home, "values.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--values", path)
	}
	for key, content := range files {
		path := filepath.Join(home, key)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--set-file", key+"="+path)
	}
	return runHelm(t, args...)
}

// helmHome returns a directory for Helm's files and the test's, and points
// Helm's cache, configuration and data there.
func helmHome(t *testing.T) string {
	t.Helper()
	// Not t.TempDir: Helm splits --values and --set-file at commas, which
	// test names may hold.
	home, err := os.MkdirTemp("", "helm-template")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	for _, env := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(env, filepath.Join(home, env))
	}
	return home
}

// runHelm runs Helm's own command with args and returns what it prints.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd, err := helmcmd.NewRootCmd(&out, args, func(bool) {})
	if err != nil {
		t.Fatalf("helm: %v", err)
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage = true
	err = cmd.Execute()
	return out.String(), err
}

// normalize turns objects into comparable values keyed by kind, namespace
// and name: CRDs decoded and encoded as the verbs do, every number a JSON
// number.
func normalize(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, crd); err != nil {
				t.Fatalf("decode CRD %s: %v", obj.GetName(), err)
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
			if err != nil {
				t.Fatal(err)
			}
			obj = &unstructured.Unstructured{Object: m}
			unstructured.RemoveNestedField(obj.Object, "status")
		}
		data, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%s %s/%s", obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
		if _, dup := out[key]; dup {
			t.Errorf("%s appears twice", key)
		}
		out[key] = v
	}
	return out
}

// compare fails t unless the chart's output holds the same objects as want,
// in any order.
func compare(t *testing.T, chartOutput string, want []*unstructured.Unstructured) {
	t.Helper()
	got, err := config.DecodeDocuments([]byte(chartOutput))
	if err != nil {
		t.Fatalf("decode helm template output: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("helm template printed %d objects, the verb %d", len(got), len(want))
	}
	if diff := cmp.Diff(normalize(t, want), normalize(t, got)); diff != "" {
		t.Errorf("helm template differs from the verb (-verb +chart):\n%s", diff)
	}
}
