package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles writes files (path relative to dir → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	cmYAML     = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\n"
	deployJSON = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}}`
)

func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.yaml":          cmYAML + "---\n# comment only\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
		"b.json":          deployJSON,
		"notes.txt":       "not a manifest",
		"sub/c.yml":       "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: default}\n",
		"sub/deep/d.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s1, namespace: default}}\n- {apiVersion: v1, kind: Secret, metadata: {name: s2, namespace: default}}\n",
	})
	tests := []struct {
		name      string
		paths     []string
		recursive bool
		stdin     string
		want      []string
		wantErr   string
	}{
		{name: "one file, several documents", paths: []string{filepath.Join(dir, "a.yaml")},
			want: []string{"ConfigMap default/cm@a.yaml (document 1)", "Namespace app@a.yaml (document 3)"}},
		{name: "directory without -R", paths: []string{dir},
			want: []string{"ConfigMap default/cm", "Namespace app", "Deployment default/web@b.json (document 1)"}},
		{name: "directory with -R expands Lists", paths: []string{dir}, recursive: true,
			want: []string{"ConfigMap default/cm", "Namespace app", "Deployment default/web", "Service default/svc@c.yml",
				"Secret default/s1@d.yaml (document 1, List item 1)", "Secret default/s2@(document 1, List item 2)"}},
		{name: "stdin", paths: []string{"-"}, stdin: cmYAML, want: []string{"ConfigMap default/cm@stdin (document 1)"}},
		{name: "missing file", paths: []string{filepath.Join(dir, "nope.yaml")}, wantErr: "nope.yaml"},
		{name: "no kind", paths: []string{"-"}, stdin: "apiVersion: v1\nmetadata: {name: x}\n", wantErr: "stdin (document 1): the manifest has no apiVersion or kind"},
		{name: "bad yaml", paths: []string{"-"}, stdin: cmYAML + "---\nkind: [\n", wantErr: "stdin (document 2): not valid YAML or JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadManifests(tt.paths, tt.recursive, strings.NewReader(tt.stdin))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d manifests %v, want %d", len(got), got, len(tt.want))
			}
			for i, want := range tt.want {
				obj, source, _ := strings.Cut(want, "@")
				if got[i].Describe() != obj || !strings.Contains(got[i].Source, source) {
					t.Errorf("manifest %d = %s from %s, want %s from ...%s", i, got[i].Describe(), got[i].Source, obj, source)
				}
				if got[i].Size == 0 {
					t.Errorf("manifest %d has no size", i)
				}
			}
		})
	}
}

// manifestsFrom decodes YAML documents as manifests of source "f.yaml".
func manifestsFrom(t *testing.T, docs ...string) []Manifest {
	t.Helper()
	ms, err := decodeManifests("f.yaml", strings.NewReader(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestValidateManifests(t *testing.T) {
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: default}\ndata: {x: " + strings.Repeat("a", 300*1024) + "}"
	big2 := strings.Replace(big, "name: big", "name: big2", 1)
	tests := []struct {
		name     string
		docs     []string
		limit    int
		wantErrs []string
	}{
		{name: "valid", docs: []string{cmYAML, deployJSON, strings.Replace(cmYAML, "default", "other", 1)}},
		{name: "none", wantErrs: []string{"no manifests found"}},
		{name: "no name", docs: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default}"},
			wantErrs: []string{"f.yaml (document 1): ConfigMap default/(no name) has no metadata.name"}},
		{name: "generateName", docs: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, generateName: a-}"},
			wantErrs: []string{"f.yaml (document 1): ConfigMap a sets metadata.generateName"}},
		{name: "duplicate", docs: []string{cmYAML, deployJSON, cmYAML},
			wantErrs: []string{"f.yaml (document 3): ConfigMap default/cm is also defined in f.yaml (document 1)"}},
		{name: "duplicate across versions of a group", docs: []string{deployJSON, strings.Replace(deployJSON, "apps/v1", "apps/v1beta2", 1)},
			wantErrs: []string{"Deployment default/web is also defined in f.yaml (document 1)"}},
		{name: "same name, other group", docs: []string{deployJSON, strings.Replace(deployJSON, "apps/v1", "example.com/v1", 1)}},
		{name: "oversize", docs: []string{big, big2, cmYAML},
			wantErrs: []string{"over the 512000-byte (500 KiB) limit", "ConfigMap default/big from f.yaml (document 1)", "split them across several works"}},
		{name: "custom limit and several errors", docs: []string{cmYAML, cmYAML}, limit: 10,
			wantErrs: []string{"is also defined in", "over the 10-byte (0 KiB) limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ms []Manifest
			if len(tt.docs) > 0 {
				ms = manifestsFrom(t, tt.docs...)
			}
			limit := tt.limit
			if limit == 0 {
				limit = 500 * 1024
			}
			err := ValidateManifests(ms, limit)
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErrs)
			}
			for _, want := range tt.wantErrs {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}
