package docscheck

import (
	"io"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
)

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"Rotating the hub's CAs", "rotating-the-hubs-cas"},
		{"Where the hub gave out: 7,930 clusters on 2 CPUs", "where-the-hub-gave-out-7930-clusters-on-2-cpus"},
		{"Scale (`test/bench/scale`)", "scale-testbenchscale"},
		{"Take-over rules (`work.kubectl-ocm.io/take-over`)", "take-over-rules-workkubectl-ocmiotake-over"},
		{"Seeing before applying: work diff and report-only works", "seeing-before-applying-work-diff-and-report-only-works"},
		{"A [linked](other.md) heading_x", "a-linked-heading_x"},
	}
	for _, tt := range tests {
		t.Run(tt.heading, func(t *testing.T) {
			assert.Equal(t, tt.want, Slug(tt.heading))
		})
	}
}

const guide = "# Guide\n\n## Install it\n\n## Install it\n\n" +
	"```sh\n# Not a heading\n```\n"

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // a part of the one problem expected, or "" for none
	}{
		{name: "file", text: "See [the guide](docs/guide.md)."},
		{name: "heading", text: "See [install](docs/guide.md#install-it)."},
		{name: "repeated heading", text: "See [install](docs/guide.md#install-it-1)."},
		{name: "own heading", text: "See [top](#readme)."},
		{name: "directory", text: "See [docs](docs/)."},
		{name: "URL", text: "See [OCM](https://open-cluster-management.io/#x)."},
		{name: "code span", text: "Write `[x](missing.md)`."},
		{name: "broken link", text: "See [gone](docs/gone.md).", want: `docs/gone.md does not exist`},
		{name: "broken anchor", text: "See [x](docs/guide.md#uninstall).", want: "docs/guide.md has no heading #uninstall"},
		{name: "heading in a code block", text: "See [x](docs/guide.md#not-a-heading).", want: "has no heading #not-a-heading"},
		{name: "own broken anchor", text: "See [x](#nowhere).", want: "README.md has no heading #nowhere"},
		{name: "reference definition", text: "[ref]: docs/missing.md", want: "docs/missing.md does not exist"},
		{name: "outside", text: "See [x](../x.md).", want: "leaves the repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"README.md":     {Data: []byte("# Readme\n\n" + tt.text + "\n")},
				"docs/guide.md": {Data: []byte(guide)},
			}
			problems, err := Links(fsys, []string{"README.md"})
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			assert.Equal(t, 3, problems[0].Line)
			assert.Contains(t, problems[0].Msg, tt.want)
		})
	}
}

// testTree is a small command tree: kubectl ocm work create|get, with
// persistent --context and -n on the root, and a hidden alias.
func testTree() *cobra.Command {
	rootCmd := &cobra.Command{Use: "kubectl-ocm"}
	rootCmd.PersistentFlags().String("context", "", "")
	rootCmd.PersistentFlags().StringP("namespace", "n", "", "")
	work := &cobra.Command{Use: "work"}
	create := &cobra.Command{Use: "create NAME", Run: func(*cobra.Command, []string) {}}
	create.Flags().StringSliceP("filename", "f", nil, "")
	create.Flags().BoolP("recursive", "R", false, "")
	create.Flags().String("clusters", "", "")
	create.Flags().String("dry-run", "none", "")
	create.Flags().Lookup("dry-run").NoOptDefVal = "unchanged"
	get := &cobra.Command{Use: "get", Aliases: []string{"list"}, Run: func(*cobra.Command, []string) {}}
	work.AddCommand(create, get)
	aliasGroup := &cobra.Command{Use: "create", Hidden: true}
	aliasGroup.AddCommand(&cobra.Command{Use: "work", Hidden: true, Run: func(*cobra.Command, []string) {}})
	rootCmd.AddCommand(work, aliasGroup)
	return rootCmd
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  string // a part of the one problem expected, or "" for none
	}{
		{name: "verb and flags", block: "```sh\nkubectl ocm work create web -f app.yaml --clusters c1 --context hub\n```"},
		{name: "flags before the verb", block: "```sh\nkubectl ocm --context hub -n apps work get\n```"},
		{name: "shorthands together", block: "```sh\nkubectl ocm work create web -Rf dir/ -napps\n```"},
		{name: "optional value", block: "```sh\nkubectl ocm work create web --dry-run -f x.yaml\n```"},
		{name: "alias", block: "```sh\nkubectl ocm work list\nkubectl ocm create work web\n```"},
		{name: "prompt and pipe", block: "```console\n$ kubectl ocm work get | grep web\nweb   c1   --no-such-flag\n```"},
		{name: "comment", block: "```sh\nkubectl ocm work get   # --not-a-flag, not a verb either\n```"},
		{name: "placeholder", block: "```sh\nkubectl ocm <verb> --help\nkubectl ocm work create <name> --clusters <cluster one>\n```"},
		{name: "not a sh block", block: "```\nkubectl ocm nothing\n```"},
		{name: "other commands", block: "```bash\nkubectl get pods --nothing\nhelm install x --bogus\n```"},
		{name: "substitution", block: "```sh\nexport X=$(kubectl ocm work get -n apps)\n```"},
		{name: "redirection", block: "```sh\nkubectl ocm work create web -f x.yaml > out.yaml 2>&1\n```"},
		{name: "unknown verb", block: "```sh\nkubectl ocm wirk get\n```", want: `unknown command "wirk" for "kubectl ocm"`},
		{name: "unknown subverb", block: "```sh\nkubectl ocm work apply web\n```", want: `unknown command "apply" for "kubectl ocm work"`},
		{name: "unknown flag", block: "```sh\nkubectl ocm work create web --placement apps/web\n```", want: `unknown flag --placement for "kubectl ocm work create"`},
		{name: "flag of another verb", block: "```sh\nkubectl ocm work get --clusters c1\n```", want: `unknown flag --clusters for "kubectl ocm work get"`},
		{name: "unknown shorthand", block: "```sh\nkubectl ocm work get -x\n```", want: "unknown shorthand flag -x"},
		{name: "continuation", block: "```sh\nkubectl ocm work create web \\\n  -f x.yaml \\\n  --bogus\n```", want: "unknown flag --bogus"},
		{name: "after a pipe", block: "```bash\ncat x | kubectl ocm work create web --bogus\n```", want: "unknown flag --bogus"},
		{name: "the binary", block: "```sh\nkubectl-ocm work bogus\n```", want: `unknown command "bogus"`},
		{name: "console prompt", block: "```console\n$ kubectl ocm work get --bogus\n```", want: "unknown flag --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"doc.md": {Data: []byte("# Doc\n\n" + tt.block + "\n")}}
			problems, err := Commands(fsys, []string{"doc.md"}, testTree())
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			assert.Equal(t, 4, problems[0].Line)
			assert.Contains(t, problems[0].Msg, tt.want)
		})
	}
}

// TestRepositoryDocs runs the check on the repository's own docs against
// the real command tree, as make verify-docs does.
func TestRepositoryDocs(t *testing.T) {
	repo := os.DirFS("../../..")
	files, err := Files(repo)
	require.NoError(t, err)
	assert.Contains(t, files, "docs/sizing.md")
	problems, err := Check(repo, files, root.NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard()), app.NewCommand(io.Discard))
	require.NoError(t, err)
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	assert.Empty(t, lines, strings.Join(lines, "\n"))
}

// TestRealTree checks commands against the real tree: clusteradm's
// spellings are known, a flag of another verb is not.
func TestRealTree(t *testing.T) {
	tree := root.NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	assert.Empty(t, checkCommand(tree, strings.Fields("kubectl ocm get token --context hub")))
	assert.Empty(t, checkCommand(tree, strings.Fields("kubectl ocm hub init --context hub --wait")))
	assert.Contains(t, checkCommand(tree, strings.Fields("kubectl ocm accept --placement x")), "unknown flag --placement")
	assert.Contains(t, checkCommand(tree, strings.Fields("kubectl ocm hub nope")), `unknown command "nope" for "kubectl ocm hub"`)
}

func TestHelpLinks(t *testing.T) {
	fsys := fstest.MapFS{"docs/guide.md": {Data: []byte(guide)}}
	tree := testTree()
	work, _, err := tree.Find([]string{"work", "create"})
	require.NoError(t, err)
	work.Long = "Create a work.\n\nSee docs/guide.md#install-it and docs/guide.md."
	work.Flags().Lookup("clusters").Usage = "The clusters (see docs/guide.md#install-it-1)."
	assert.Empty(t, HelpLinks(fsys, tree))

	work.Long = "See docs/guide.md#uninstall, and docs/gone.md."
	work.Flags().Lookup("clusters").Usage = "The clusters (see docs/guide.md#clusters)."
	var msgs []string
	for _, p := range HelpLinks(fsys, tree) {
		assert.Equal(t, "kubectl-ocm work create", p.File)
		msgs = append(msgs, p.Msg)
	}
	require.Len(t, msgs, 3)
	assert.Contains(t, msgs[0], "docs/guide.md has no heading #uninstall")
	assert.Contains(t, msgs[1], "docs/gone.md does not exist")
	assert.Contains(t, msgs[2], "has no heading #clusters")
}

// guideWith returns a development guide whose Layout block is layout and
// whose "Kept as they are" section is kept.
func guideWith(layout, kept string) string {
	return "# Development\n\n## Layout\n\n```\n" + layout + "```\n\n## Kept as they are\n\n" + kept + "\n## Releasing\n\n`gone/x.go`\n"
}

func TestLayout(t *testing.T) {
	const layout = "plugins/<verb>/   one per verb: accept/, work/ (and plugins/work/diff/)\n" +
		"plugins/cli/      shared\n" +
		"controllers/<domain>/ domains:\n" +
		"  work/             the work\n" +
		"                    agent/ and hub/ apart\n" +
		"pkg/<lib>/        apply/\n" +
		"config/crd/, config/hub/\n" +
		"hack/             tools: verifydocs/\n" +
		"test/             tests\n"
	tree := func() fstest.MapFS {
		fsys := fstest.MapFS{}
		for _, d := range []string{"plugins/accept", "plugins/work", "plugins/work/diff", "plugins/cli", "controllers/work/agent", "controllers/work/hub",
			"pkg/apply", "config/crd", "config/hub", "hack/verifydocs", "test/e2e/testdata", "plugins/.hidden", "examples/a"} {
			fsys[d+"/x.go"] = &fstest.MapFile{Data: []byte("package x\n")}
		}
		return fsys
	}
	tests := []struct {
		name   string
		layout string
		kept   string
		change func(fstest.MapFS)
		want   []string // parts of the problems expected, in order
	}{
		{name: "in step", layout: layout + "test/e2e/\n", kept: "- `controllers/work/agent` and `pkg/apply.Apply`: why.\n- `test/{e2e,e2e/testdata}`: why.\n"},
		{name: "a new verb", layout: layout + "test/e2e/\n",
			change: func(f fstest.MapFS) { f["plugins/mcp/x.go"] = &fstest.MapFile{Data: []byte("package mcp\n")} },
			want:   []string{"does not name plugins/mcp/"}},
		{name: "a new domain", layout: layout + "test/e2e/\n",
			change: func(f fstest.MapFS) {
				f["controllers/importer/x.go"] = &fstest.MapFile{Data: []byte("package importer\n")}
			},
			want: []string{"does not name controllers/importer/"}},
		{name: "a directory gone", layout: layout + "test/e2e/\n  gone/   was here\n",
			want: []string{"names test/e2e/gone/, which does not exist"}},
		{name: "a named subdirectory gone", layout: layout + "test/e2e/\n",
			change: func(f fstest.MapFS) { delete(f, "plugins/work/diff/x.go") },
			want:   []string{"names plugins/work/diff/, which does not exist"}},
		{name: "a child in a description gone", layout: layout + "test/e2e/\n",
			change: func(f fstest.MapFS) { delete(f, "controllers/work/hub/x.go") },
			want:   []string{"names controllers/work/hub/, which does not exist"}},
		{name: "missing from a top level", layout: layout,
			want: []string{"does not name test/e2e/"}},
		{name: "a kept path gone", layout: layout + "test/e2e/\n", kept: "- `test/{e2e,bench}`: why.\n- `pkg/gone.Func`: why.\n",
			want: []string{`"test/bench" is kept as it is, but test/bench does not exist`, `"pkg/gone.Func" is kept`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := tree()
			if tt.change != nil {
				tt.change(fsys)
			}
			fsys[DevelopmentGuide] = &fstest.MapFile{Data: []byte(guideWith(tt.layout, tt.kept))}
			problems, err := Layout(fsys, DevelopmentGuide)
			require.NoError(t, err)
			require.Len(t, problems, len(tt.want), "%v", problems)
			for i, w := range tt.want {
				assert.Contains(t, problems[i].Msg, w)
			}
		})
	}
}

// TestLayoutOfTheRepository checks the development guide of this
// repository, as make verify-docs does.
func TestLayoutOfTheRepository(t *testing.T) {
	problems, err := Layout(os.DirFS("../../.."), DevelopmentGuide)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
