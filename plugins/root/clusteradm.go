package root

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// clusteradmAlias is one of clusteradm's spellings that kubectl ocm
// accepts: the words of the alias, and those of the native verb it runs.
type clusteradmAlias struct {
	alias, native string
}

// clusteradmAliases are clusteradm's spellings of verbs kubectl ocm has,
// so that clusteradm scripts keep working. Each runs the native verb, with
// its flags, and prints nothing more; it is hidden from the help, whose
// text names the native spelling. (`get klusterlet-info` is an alias of
// `get klusterlet` itself.)
var clusteradmAliases = []clusteradmAlias{
	{"init", "hub init"},
	{"clean", "hub clean"},
	{"get token", "hub token"},
	{"get hub-info", "hub status"},
	{"get works", "work get"},
	{"get addon", "addon list"},
	{"get clustersets", "clusterset get"},
	{"get placements", "placement get"},
	{"create work", "work create"},
	{"delete work", "work delete"},
	{"create placement", "placement create"},
	{"create clusterset", "clusterset create"},
	{"delete clusterset", "clusterset delete"},
	{"delete token", "hub token revoke"},
	{"upgrade clustermanager", "upgrade hub"},
}

// clusteradmOnly are clusteradm commands kubectl ocm has no verb for, with
// what to use instead: an unknown command names it.
var clusteradmOnly = map[string]string{
	"install":       "install a hub add-on with `kubectl ocm addon create` from its manifests",
	"uninstall":     "remove a hub add-on with `kubectl delete clustermanagementaddon NAME`",
	"proxy health":  "`kubectl ocm proxy kubeconfig CLUSTER` reports whether the cluster answers through the hub",
	"proxy kubectl": "write a kubeconfig with `kubectl ocm proxy kubeconfig CLUSTER --output-file FILE` and run `kubectl --kubeconfig FILE ...`",
}

// addClusteradmAliases adds every alias of clusteradmAliases to root, each a
// hidden command built anew by newTree (a tree of the native verbs, which
// shares root's kubectl flags), so that it has options of its own.
func addClusteradmAliases(root *cobra.Command, newTree func() *cobra.Command) {
	for _, a := range clusteradmAliases {
		tree := newTree()
		native, _, err := tree.Find(strings.Fields(a.native))
		if err != nil || native == tree {
			panic(fmt.Sprintf("clusteradm alias %q: no native verb %q", a.alias, a.native))
		}
		// The alias writes as the native verb does.
		cli.PinFieldManagers(native)
		native.Parent().RemoveCommand(native)
		words := strings.Fields(a.alias)
		parent := root
		for _, w := range words[:len(words)-1] {
			parent = childOrNew(parent, w)
		}
		native.Use = words[len(words)-1] + strings.TrimPrefix(native.Use, native.Name())
		native.Aliases = nil
		native.Hidden = true
		native.GroupID = ""
		native.Short = "clusteradm's spelling of `kubectl ocm " + a.native + "`"
		native.Long = native.Short + ", which it runs with the same flags.\n\n" + native.Long
		parent.AddCommand(native)
	}
}

// childOrNew returns parent's subcommand name, adding a hidden one that
// only groups subcommands when there is none.
func childOrNew(parent *cobra.Command, name string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name {
			return c
		}
	}
	c := &cobra.Command{Use: name, Short: "clusteradm's `" + name + "` commands", Hidden: true}
	parent.AddCommand(c)
	return c
}

// failUnknownSubcommands makes every command below root that only groups
// subcommands fail, instead of printing its help and exiting 0, when it is
// run without a subcommand or with one it does not have: the error says
// "unknown command", the closest verbs, and the native spelling of a
// clusteradm command. A script with a mistyped command stops there.
func failUnknownSubcommands(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
			return
		}
		c.Args = cobra.ArbitraryArgs
		c.SetFlagErrorFunc(unknownSubcommandFlag)
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return unknownSubcommand(cmd, args)
		}
	}
	walk(root)
	// kubectl ocm alone prints its help, as kubectl does.
	root.Args = cobra.ArbitraryArgs
	root.SetFlagErrorFunc(unknownSubcommandFlag)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownSubcommand(cmd, args)
	}
	// --help after an unknown command is that error too, as for kubectl
	// and clusteradm: cobra prints help and succeeds whatever the words
	// before --help, so the help function prints the error instead and
	// leaves it for Execute to return.
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		if words := cmd.Flags().Args(); cmd.HasSubCommands() && len(words) > 0 && cmd.Flags().Changed("help") {
			err := unknownSubcommand(cmd, words)
			cmd.PrintErrln(cmd.ErrPrefix(), err.Error())
			root.Annotations[helpErrorAnnotation] = err.Error()
			return
		}
		help(cmd, args)
	})
}

// helpErrorAnnotation is the root's annotation that holds the error of a
// --help asked of an unknown command, which Execute returns.
const helpErrorAnnotation = "kubectl-ocm/help-error"

// Execute runs root, a command of NewCmdRoot, with ctx and returns its
// error: the error of the verb that ran, or of an unknown command asked for
// its --help, which cobra itself answers with the help of the command above
// and no error.
func Execute(ctx context.Context, root *cobra.Command) error {
	delete(root.Annotations, helpErrorAnnotation)
	if err := root.ExecuteContext(ctx); err != nil {
		return err
	}
	if msg, ok := root.Annotations[helpErrorAnnotation]; ok {
		return errors.New(msg)
	}
	return nil
}

// unknownSubcommandFlag is the flag error of a group command: the flags of
// an unknown command (`kubectl ocm install hub-addon --names argocd`) are
// not the group's, so the error is the unknown command, not its first flag.
// A group without an unknown command, and every other command, keep err.
func unknownSubcommandFlag(cmd *cobra.Command, err error) error {
	// The words before the flag that failed, which the flag set kept.
	if words := cmd.Flags().Args(); cmd.HasSubCommands() && len(words) > 0 {
		return unknownSubcommand(cmd, words)
	}
	return err
}

// unknownSubcommand is the error of group command cmd run with args.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	// A hidden group (clusteradm's create and delete) names its hidden
	// subcommands: they are all it has.
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() || (cmd.Hidden && c.Name() != "help") {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	if len(args) == 0 {
		return fmt.Errorf("%q needs a subcommand: one of %s; see '%s --help'", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath())
	}
	word := args[0]
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	path := strings.TrimSpace(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().CommandPath()) + " " + word)
	if hint, ok := clusteradmOnly[path]; ok {
		msg += "; it is a clusteradm command: " + hint
	}
	if suggestions := suggest(cmd, word); len(suggestions) > 0 {
		msg += "; did you mean " + strings.Join(suggestions, " or ") + "?"
	}
	return fmt.Errorf("%s; see '%s --help' for the commands: %s", msg, cmd.CommandPath(), strings.Join(names, ", "))
}

// suggest returns the subcommands of cmd, clusteradm's spellings
// included, whose names are within two edits of word or start with it.
func suggest(cmd *cobra.Command, word string) []string {
	word = strings.ToLower(word)
	var out []string
	for _, c := range cmd.Commands() {
		if c.Name() == "help" || (!c.IsAvailableCommand() && !c.Hidden) {
			continue
		}
		if editDistance(word, c.Name()) <= 2 || strings.HasPrefix(c.Name(), word) {
			out = append(out, c.Name())
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
