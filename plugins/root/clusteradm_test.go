package root

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestGroupCommandsFailOnMistakes walks the whole command tree: every
// command that only groups subcommands fails when run without one or with
// one it does not have, so that no future group prints its help and exits 0.
// A verb with subcommands of its own (hub token, and its alias get token)
// runs alone, and fails on an unknown subcommand.
func TestGroupCommandsFailOnMistakes(t *testing.T) {
	verbs := map[string]bool{"hub token": true, "get token": true}
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() && len(path) > 0 {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard()), nil)
	if len(groups) < 8 {
		t.Fatalf("found %d group commands, want at least 8: %v", len(groups), groups)
	}
	for _, path := range groups {
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			if verbs[strings.Join(path, " ")] {
				// runs alone (it needs a hub, which there is not)
			} else {
				assert.ErrorContains(t, run(t, path...), "needs a subcommand: one of ", "kubectl ocm %s", strings.Join(path, " "))
			}
			for _, args := range [][]string{{"no-such-verb"}, {"no-such-verb", "--no-such-flag", "x"}} {
				err := run(t, append(path, args...)...)
				assert.ErrorContains(t, err, `unknown command "`)
			}
		})
	}
}

func TestUnknownCommands(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"initt"}, []string{`unknown command "initt" for "kubectl ocm"`, "did you mean init?"}},
		{[]string{"wrk"}, []string{"did you mean work?"}},
		{[]string{"hub", "innit"}, []string{`unknown command "innit" for "kubectl ocm hub"`, "did you mean init?", "clean, init, rotate-ca, status, token"}},
		{[]string{"get", "workz"}, []string{"did you mean works?"}},
		{[]string{"proxy", "health"}, []string{`unknown command "health" for "kubectl ocm proxy"`, "it is a clusteradm command: `kubectl ocm proxy kubeconfig CLUSTER` reports", "for the commands: kubeconfig"}},
		{[]string{"proxy", "kubectl", "--cluster", "c1", "--args", "get pods"}, []string{`unknown command "kubectl" for "kubectl ocm proxy"`, "kubectl --kubeconfig FILE"}},
		{[]string{"proxy"}, []string{`"kubectl ocm proxy" needs a subcommand: one of kubeconfig`}},
		{[]string{"install", "hub-addon", "--names", "argocd"}, []string{`unknown command "install" for "kubectl ocm"`, "it is a clusteradm command"}},
		{[]string{"--no-such-flag"}, []string{"unknown flag: --no-such-flag"}},
		{[]string{"hub", "--no-such-flag", "init"}, []string{"unknown flag: --no-such-flag"}},
		{[]string{"delete", "tokens"}, []string{`unknown command "tokens" for "kubectl ocm delete"`, "did you mean token?"}},
		// --help after an unknown command fails as kubectl's does, so a
		// script that checks a verb exists this way is not fooled.
		{[]string{"frobnicate", "--help"}, []string{`unknown command "frobnicate" for "kubectl ocm"`}},
		{[]string{"hub", "innit", "--help"}, []string{`unknown command "innit" for "kubectl ocm hub"`, "did you mean init?"}},
		{[]string{"hub", "token", "nope", "-h"}, []string{`unknown command "nope" for "kubectl ocm hub token"`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := run(t, tt.args...)
			if err == nil {
				t.Fatal("succeeded")
			}
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// TestHelpOfKnownCommands checks that --help of every real command, and of
// kubectl ocm itself, still prints help and succeeds.
func TestHelpOfKnownCommands(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"hub", "--help"}, {"hub", "token", "-h"}, {"work", "create", "--help"}, {"get", "works", "--help"}, {"help", "hub"}} {
		root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := Execute(context.Background(), root); err != nil || !strings.Contains(out.String(), "Usage:") {
			t.Errorf("kubectl ocm %s: err = %v, output:\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

// TestClusteradmAliases checks that each of clusteradm's spellings is a
// hidden command naming the native one, with the native one's flags.
func TestClusteradmAliases(t *testing.T) {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	for _, a := range clusteradmAliases {
		t.Run(a.alias, func(t *testing.T) {
			alias, _, err := root.Find(strings.Fields(a.alias))
			if err != nil || alias.Name() != strings.Fields(a.alias)[len(strings.Fields(a.alias))-1] {
				t.Fatalf("find %q: %v (found %q)", a.alias, err, alias.Name())
			}
			native, _, err := root.Find(strings.Fields(a.native))
			if err != nil {
				t.Fatalf("find %q: %v", a.native, err)
			}
			if !alias.Hidden || alias.RunE == nil || !strings.Contains(alias.Short, "`kubectl ocm "+a.native+"`") {
				t.Errorf("alias %q: hidden %v, RunE set %v, short %q", a.alias, alias.Hidden, alias.RunE != nil, alias.Short)
			}
			if alias == native {
				t.Fatal("the alias is the native command itself")
			}
			native.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if alias.LocalFlags().Lookup(f.Name) == nil {
					t.Errorf("alias %q lacks --%s of %q", a.alias, f.Name, a.native)
				}
			})
		})
	}
}

// run runs kubectl ocm args against no cluster and returns its error.
func run(t *testing.T, args ...string) error {
	t.Helper()
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	return Execute(context.Background(), root)
}
