package main

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "example.com/m"

// file returns a Go file of package name importing each of imports (paths
// in the module).
func file(name string, imports ...string) *fstest.MapFile {
	src := "package " + name + "\n\nimport (\n"
	for _, imp := range imports {
		src += "\t_ \"" + module + "/" + imp + "\"\n"
	}
	return &fstest.MapFile{Data: []byte(src + "\t\"fmt\"\n)\n")}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		imports    []string
		exceptions []Exception
		want       string // a part of the one violation expected, or "" for none
	}{
		{name: "a domain imports pkg", path: "controllers/work/agent/a.go", imports: []string{"pkg/apply"}},
		{name: "a domain imports itself", path: "controllers/work/agent/a.go", imports: []string{"controllers/work/agent/apply"}},
		{name: "a domain imports another", path: "controllers/work/agent/a.go", imports: []string{"controllers/registration/hub"},
			want: "controllers/work and controllers/registration share code through pkg/"},
		{name: "a new domain imports another", path: "controllers/newdomain/n.go", imports: []string{"controllers/work"},
			want: "controllers/newdomain and controllers/work"},
		{name: "a test of a domain imports another", path: "controllers/addon/hub/a_test.go", imports: []string{"controllers/work/hub"},
			want: "controllers/addon and controllers/work"},
		{name: "a domain imports cmd", path: "controllers/addon/a.go", imports: []string{"controllers/cmd/ocm-controller/app"},
			want: "controllers/cmd wires the domains"},
		{name: "cmd imports the domains", path: "controllers/cmd/ocm-controller/app/hub.go", imports: []string{"controllers/work/hub", "controllers/addon/hub"}},
		{name: "a controller imports a verb", path: "controllers/cmd/ocm-controller/app/hub.go", imports: []string{"plugins/cli"},
			want: "the controllers share code with the CLI through pkg/"},
		{name: "config imports a controller", path: "config/valuesfile/v.go", imports: []string{"controllers/operator/klusterlet"},
			want: "config/ renders the manifests"},
		{name: "config imports a verb", path: "config/c.go", imports: []string{"plugins/cli"}, want: "config/ renders the manifests"},
		{name: "config imports pkg", path: "config/c.go", imports: []string{"pkg/apply", "config/valuesfile"}},
		{name: "a verb imports cli", path: "plugins/join/run.go", imports: []string{"plugins/cli", "config", "pkg/identity"}},
		{name: "a verb imports another", path: "plugins/importcmd/run.go", imports: []string{"plugins/accept"},
			want: "the verbs plugins/importcmd and plugins/accept share code through plugins/cli or pkg/"},
		{name: "a verb's subpackage imports its parent", path: "plugins/work/diff/d.go", imports: []string{"plugins/work", "plugins/work/internal/workargs"}},
		{name: "a verb's subpackage imports another verb", path: "plugins/work/diff/d.go", imports: []string{"plugins/placement"},
			want: "the verbs plugins/work and plugins/placement"},
		{name: "cli imports a verb", path: "plugins/cli/c.go", imports: []string{"plugins/join"}, want: "the verbs plugins/cli and plugins/join"},
		{name: "root wires the verbs", path: "plugins/root/root.go", imports: []string{"plugins/join", "plugins/accept"}},
		{name: "the main imports root", path: "plugins/kubectl-ocm/main.go", imports: []string{"plugins/root"}},
		{name: "an exception", path: "plugins/mcp/m.go", imports: []string{"plugins/work/diff"},
			exceptions: []Exception{{From: "plugins/mcp", To: "plugins/work", Reason: "r"}}},
		{name: "an exception for another verb", path: "plugins/mcp/m.go", imports: []string{"plugins/placement", "plugins/work"},
			exceptions: []Exception{{From: "plugins/mcp", To: "plugins/work", Reason: "r"}}, want: "plugins/mcp and plugins/placement"},
		{name: "outside the trees", path: "hack/verifydocs/main.go", imports: []string{"plugins/root", "controllers/cmd/ocm-controller/app"}},
		{name: "in testdata", path: "plugins/join/testdata/x.go", imports: []string{"plugins/accept"}},
		{name: "in a nested module", path: "plugins/nested/x.go", imports: []string{"plugins/accept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				tt.path:                 file("x", tt.imports...),
				"plugins/nested/go.mod": {Data: []byte("module example.com/nested\n")},
			}
			got, unused, err := Check(fsys, module, tt.exceptions)
			require.NoError(t, err)
			assert.Empty(t, unused)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Contains(t, got[0].Why, tt.want)
			assert.Equal(t, tt.path, got[0].File)
			assert.Equal(t, 4, got[0].Line)
		})
	}
}

func TestCheckUnusedException(t *testing.T) {
	fsys := fstest.MapFS{"plugins/mcp/m.go": file("mcp", "plugins/work", "plugins/cli")}
	exceptions := []Exception{
		{From: "plugins/mcp", To: "plugins/work", Reason: "moving to pkg/"},
		{From: "plugins/mcp", To: "plugins/placement", Reason: "moving to pkg/"},
	}
	got, unused, err := Check(fsys, module, exceptions)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, exceptions[1:], unused)
}

func TestModuleOf(t *testing.T) {
	got, err := moduleOf(fstest.MapFS{"go.mod": {Data: []byte("// x\nmodule github.com/a/b\n\ngo 1.27\n")}})
	require.NoError(t, err)
	assert.Equal(t, "github.com/a/b", got)
	_, err = moduleOf(fstest.MapFS{})
	assert.ErrorContains(t, err, "run it from the repository's root")
}
