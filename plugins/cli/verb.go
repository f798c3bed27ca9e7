package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// Verb is the Options struct of one command: Complete, Validate and Run are
// called in that order.
type Verb interface {
	// Complete fills the options from the arguments and the environment.
	Complete(cmd *cobra.Command, args []string) error
	// Validate checks the options without touching any cluster.
	Validate() error
	// Run does the work.
	Run(ctx context.Context) error
}

// RunE returns the cobra RunE of o: Complete, Validate, Run.
func RunE(o Verb) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := clusterFlagMistake(cmd); err != nil {
			return err
		}
		return clusterFlagHint(cmd, run(cmd, args, o))
	}
}

// run is RunE's work. The verb runs with a context that carries its field
// manager (see FieldManager).
func run(cmd *cobra.Command, args []string, o Verb) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	cmd.SetContext(WithFieldManager(ctx, FieldManager(cmd)))
	if err := CompleteValidate(o, cmd, args); err != nil {
		return err
	}
	return o.Run(cmd.Context())
}

// CompleteValidate calls o's Complete and then, unless Complete failed for
// another reason than FlagErrors, its Validate, returning the errors of both:
// the verb's steps before Run.
func CompleteValidate(o Verb, cmd *cobra.Command, args []string) error {
	err := o.Complete(cmd, args)
	if err != nil && !errors.As(err, new(flagErrors)) {
		return err
	}
	return errors.Join(err, o.Validate())
}

// FlagErrors returns errs joined, or nil when all are nil, as the mistakes
// Complete found in the flags it resolved (an image that is no image
// reference, a file that cannot be read): CompleteValidate then still calls
// Validate and returns its errors with them, so that a user sees every
// mistake at once, one a line. Validate must then check only what does not
// depend on what Complete could not resolve.
func FlagErrors(errs ...error) error {
	if err := errors.Join(errs...); err != nil {
		return flagErrors{err}
	}
	return nil
}

// flagErrors marks the errors of FlagErrors.
type flagErrors struct{ error }

// Unwrap returns the joined errors.
func (e flagErrors) Unwrap() error { return e.error }

// clusterFlagMistake stops a verb that names managed clusters with
// --clusters, before it sends any request, when it was given --cluster NAME
// (clusteradm's spelling) without --clusters and NAME is a managed cluster of
// the hub: kubectl's --cluster would send every request to the kubeconfig's
// cluster entry NAME, where the hub's credentials do not hold. It asks the
// hub of --kubeconfig and --context, without --cluster, and lets the verb run
// when NAME is no managed cluster there or the hub cannot say.
func clusterFlagMistake(cmd *cobra.Command) error {
	cluster, clusters := cmd.Flags().Lookup("cluster"), cmd.Flags().Lookup("clusters")
	if cluster == nil || clusters == nil || !cluster.Changed || clusters.Changed || cluster.Value.String() == "" {
		return nil
	}
	name := cluster.Value.String()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		rules.ExplicitPath = f.Value.String()
	}
	overrides := &clientcmd.ConfigOverrides{}
	if f := cmd.Flags().Lookup("context"); f != nil {
		overrides.CurrentContext = f.Value.String()
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil
	}
	cfg.Timeout = clusterFlagCheckTimeout
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), clusterFlagCheckTimeout)
	defer cancel()
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{}); err != nil {
		return nil
	}
	return fmt.Errorf("--cluster %s is kubectl's flag, which would send the requests to the kubeconfig's cluster entry %s instead of the hub; %s is a managed cluster of the hub %s: name it with --clusters %s", name, name, name, cfg.Host, name)
}

// clusterFlagCheckTimeout bounds clusterFlagMistake's question to the hub.
const clusterFlagCheckTimeout = 10 * time.Second

// clusterFlagHint adds to err, when --cluster was given to a verb that
// names managed clusters with --clusters, that --cluster is kubectl's flag:
// clusteradm's --cluster NAME means --clusters NAME here.
func clusterFlagHint(cmd *cobra.Command, err error) error {
	cluster, clusters := cmd.Flags().Lookup("cluster"), cmd.Flags().Lookup("clusters")
	if err == nil || cluster == nil || clusters == nil || !cluster.Changed {
		return err
	}
	return fmt.Errorf("%w; note that --cluster %s is kubectl's flag, the kubeconfig cluster to use: name managed clusters with --clusters %s", err, cluster.Value, cluster.Value)
}

// Dry-run modes of --dry-run.
const (
	// DryRunNone writes to the hub.
	DryRunNone = "none"
	// DryRunClient prints what would be written and sends nothing.
	DryRunClient = "client"
	// DryRunServer has the hub validate and admit the objects without storing them.
	DryRunServer = "server"
)

// AddDryRunFlag adds --dry-run=none|client|server to cmd, storing it in target.
func AddDryRunFlag(cmd *cobra.Command, target *string) {
	*target = DryRunNone
	cmd.Flags().StringVar(target, "dry-run", DryRunNone, `"client" prints the objects and sends nothing; "server" has the hub validate and admit them without storing them.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = DryRunClient
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{DryRunNone, DryRunClient, DryRunServer}, cobra.ShellCompDirectiveNoFileComp))
}

// ValidateDryRun fails unless mode is none, client or server.
func ValidateDryRun(mode string) error {
	if slices.Contains([]string{DryRunNone, DryRunClient, DryRunServer}, mode) {
		return nil
	}
	return errors.New("--dry-run " + mode + " is not supported: use none, client or server")
}

// ValidateTimeout fails unless the --timeout value d is positive.
func ValidateTimeout(d time.Duration) error {
	if d > 0 {
		return nil
	}
	return fmt.Errorf("--timeout %s must be positive: give how long to wait, such as 2m", d)
}

// FirstArg returns args[0], or "" when there is no argument.
func FirstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
