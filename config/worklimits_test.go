package config

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// manifestPolicies are the admission policies that check the manifests of
// ManifestWorks and ManifestWorkReplicaSets.
var manifestPolicies = []string{
	"manifestwork-manifests.open-cluster-management.io",
	"manifestworkreplicaset-manifests.open-cluster-management.io",
}

// sizeNumbers finds the numbers that spell the manifest size limit in text,
// each with what it must equal: the limit in bytes or in KiB.
var sizeNumbers = []struct {
	pattern *regexp.Regexp
	want    int
}{
	{regexp.MustCompile(`dataSize <= (\d+)`), workv1.DefaultManifestsSizeLimit},
	{regexp.MustCompile(`(\d+)-byte`), workv1.DefaultManifestsSizeLimit},
	{regexp.MustCompile(`\((\d+) bytes\)`), workv1.DefaultManifestsSizeLimit},
	{regexp.MustCompile(`(\d+) KiB`), workv1.DefaultManifestsSizeLimit / 1024},
}

// checkSizeNumbers fails t when a number of sizeNumbers in text differs from
// the limit, and returns how many it found.
func checkSizeNumbers(t *testing.T, where, text string) int {
	t.Helper()
	found := 0
	for _, n := range sizeNumbers {
		for _, m := range n.pattern.FindAllStringSubmatch(text, -1) {
			found++
			if got, _ := strconv.Atoi(m[1]); got != n.want {
				t.Errorf("%s says %q, but workv1.DefaultManifestsSizeLimit makes it %d: change it to match", where, m[0], n.want)
			}
		}
	}
	return found
}

// The admission policies and the CRD descriptions cannot import
// workv1.DefaultManifestsSizeLimit, which `work create` checks: they spell
// the number out, and this test keeps them equal to it.
func TestManifestSizeLimitMatchesTheAPI(t *testing.T) {
	files, err := fs.Glob(manifestFiles, "hub/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		data, err := manifestFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), manifestPolicies[0]) {
			found += checkSizeNumbers(t, f, string(data))
		}
	}
	// Each policy states the limit in its rule and its message.
	if found < 2*len(manifestPolicies) {
		t.Errorf("the manifest policies in config/hub state the size limit %d times, want at least %d: was the rule renamed or its limit removed?", found, 2*len(manifestPolicies))
	}
	for _, name := range []string{"manifestworks.work.open-cluster-management.io", "manifestworkreplicasets.work.open-cluster-management.io"} {
		crd, err := CRD(name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(crd.Spec.Versions)
		if err != nil {
			t.Fatal(err)
		}
		// Descriptions wrap lines; join them to match phrases.
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(data), `\n`, " ")), " ")
		if checkSizeNumbers(t, "CRD "+name, text) == 0 {
			t.Errorf("CRD %s does not state the manifest size limit (spec.workload.manifests of pkg/apis/work/v1)", name)
		}
	}
}

// The admission policies find duplicate manifests by a key computed in CEL;
// it must be workv1.ManifestKey, by which `work create` finds them.
func TestManifestKeyMatchesThePolicies(t *testing.T) {
	manifests := []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "default"}},
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}},
		map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"}},
		map[string]any{"apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"}},
		map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "r", "namespace": ""}},
	}
	var want []string
	for _, m := range manifests {
		u := unstructured.Unstructured{Object: m.(map[string]any)}
		want = append(want, workv1.ManifestKey(u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()))
	}
	env, err := cel.NewEnv(cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)), ext.Strings())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Render("hub", HubValues{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range manifestPolicies {
		t.Run(name, func(t *testing.T) {
			expr := policyVariable(t, objs, name, "keys")
			ast, iss := env.Compile(expr)
			if iss.Err() != nil {
				t.Fatalf("compile variable keys of %s: %v", name, iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(map[string]any{"variables": map[string]any{"manifests": manifests}})
			if err != nil {
				t.Fatalf("evaluate variable keys of %s: %v", name, err)
			}
			native, err := out.ConvertToNative(reflect.TypeFor[[]string]())
			if err != nil {
				t.Fatalf("variable keys of %s is not a list of strings: %v", name, err)
			}
			if keys := native.([]string); strings.Join(keys, "|") != strings.Join(want, "|") {
				t.Errorf("policy %s keys manifests as %q, workv1.ManifestKey as %q: make them agree", name, keys, want)
			}
		})
	}
}

// policyVariable returns the expression of variable name of the
// ValidatingAdmissionPolicy policy among objs.
func policyVariable(t *testing.T, objs []*unstructured.Unstructured, policy, name string) string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" || o.GetName() != policy {
			continue
		}
		vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
		for _, v := range vars {
			if m, ok := v.(map[string]any); ok && m["name"] == name {
				expr, _ := m["expression"].(string)
				return expr
			}
		}
		t.Fatalf("policy %s has no variable %s", policy, name)
	}
	t.Fatalf("config/hub has no ValidatingAdmissionPolicy %s", policy)
	return ""
}
