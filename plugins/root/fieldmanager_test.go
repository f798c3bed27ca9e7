package root

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// installVerbs are the verbs that write as the one install field manager,
// with every verb below them; clusteradm's spellings of them too.
var installVerbs = []string{"hub init", "hub token", "hub clean", "join", "unjoin", "upgrade", "init", "clean", "get token", "delete token", "upgrade clustermanager"}

// fieldManagerName is a field manager as the verbs make them.
var fieldManagerName = regexp.MustCompile(`^kubectl-ocm(-[a-z0-9]+)*$`)

// TestFieldManagers walks the whole command tree: every verb has a valid
// field manager, the install verbs share the install one, every other verb
// has its own, and clusteradm's spellings write as the verbs they run.
func TestFieldManagers(t *testing.T) {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	owner := map[string]string{}
	var verbs int
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.Runnable() {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), root.CommandPath()+" ")
		m := cli.FieldManager(c)
		verbs++
		assert.LessOrEqual(t, len(m), metav1validation.FieldManagerMaxLength, path)
		assert.Regexp(t, fieldManagerName, m, path)
		for _, r := range m {
			assert.True(t, r < unicode.MaxASCII && unicode.IsPrint(r), "%s: %q", path, m)
		}
		if isInstallVerb(path) {
			assert.Equal(t, cli.InstallFieldManager, m, path)
			return
		}
		if c.Hidden {
			// clusteradm's spellings: checked below.
			return
		}
		assert.Equal(t, "kubectl-ocm-"+strings.ReplaceAll(path, " ", "-"), m, path)
		if other, ok := owner[m]; ok {
			t.Errorf("%s and %s both write as %s", path, other, m)
		}
		owner[m] = path
	}
	walk(root)
	assert.Greater(t, verbs, 30)

	for _, a := range clusteradmAliases {
		alias, _, err := root.Find(strings.Fields(a.alias))
		if !assert.NoError(t, err, a.alias) {
			continue
		}
		native, _, err := root.Find(strings.Fields(a.native))
		if !assert.NoError(t, err, a.native) {
			continue
		}
		assert.Equal(t, cli.FieldManager(native), cli.FieldManager(alias), "clusteradm's %s runs %s", a.alias, a.native)
	}

	for path, want := range map[string]string{
		"accept":               "kubectl-ocm-accept",
		"work create":          "kubectl-ocm-work-create",
		"work rollout approve": "kubectl-ocm-work-rollout-approve",
		"placement create":     "kubectl-ocm-placement-create",
		"clusterset set":       "kubectl-ocm-clusterset-set",
		"addon enable":         "kubectl-ocm-addon-enable",
		"hub init":             "kubectl-ocm",
		"join":                 "kubectl-ocm",
		"upgrade klusterlet":   "kubectl-ocm",
		"create work":          "kubectl-ocm-work-create",
		"init":                 "kubectl-ocm",
	} {
		c, _, err := root.Find(strings.Fields(path))
		if assert.NoError(t, err, path) {
			assert.Equal(t, want, cli.FieldManager(c), path)
		}
	}
}

// isInstallVerb reports whether path is one of installVerbs or below one.
func isInstallVerb(path string) bool {
	for _, v := range installVerbs {
		if path == v || strings.HasPrefix(path, v+" ") {
			return true
		}
	}
	return false
}
