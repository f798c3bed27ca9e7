package rollout

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// UndoOptions are the flags and arguments of `kubectl ocm work rollout undo`.
type UndoOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	ToRevision int64
	DryRun     string
}

func newCmdUndo(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UndoOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}}
	cmd := &cobra.Command{
		Use:   "undo NAME [--to-revision N] [-n NAMESPACE]",
		Short: "Roll ManifestWorkReplicaSet NAME back to an earlier revision, through its own rollout strategy",
		Long: `Roll ManifestWorkReplicaSet NAME back to an earlier revision: its template
(and take-over rule) become those of that revision, which the hub then rolls
out to the clusters as any change of the template, with the set's rollout
strategy (Progressive: a few clusters at a time). The revision becomes the
newest, as with kubectl rollout undo.`,
		Example: cli.Examples(`
			# Back to the previous revision of web in namespace apps
			kubectl ocm work rollout undo web -n apps

			# Back to revision 3 (see kubectl ocm work rollout history web -n apps)
			kubectl ocm work rollout undo web -n apps --to-revision 3`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	cmd.Flags().Int64Var(&o.ToRevision, "to-revision", 0, "The revision to roll back to; 0 means the one before the current.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says which revision the set would go back to and changes nothing; "server" also has the hub admit the change without storing it.`)
	return cmd
}

// Complete records NAME and the namespace.
func (o *UndoOptions) Complete(_ *cobra.Command, args []string) error { return o.complete(args) }

// Validate checks the flags.
func (o *UndoOptions) Validate() error {
	errs := []error{workargs.ValidateName(o.Name), cli.ValidateDryRunMode(o.DryRun)}
	if o.ToRevision < 0 {
		errs = append(errs, fmt.Errorf("--to-revision %d: a revision is a number from 1, or 0 for the one before the current", o.ToRevision))
	}
	return errors.Join(errs...)
}

// Run writes the chosen revision's template into the set.
func (o *UndoOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	h, err := setstate.ReadHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	cur := h.Current()
	if cur == nil {
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revisions yet: the hub controller records them as it reconciles the set (kubectl ocm hub status)", o.Namespace, o.Name)
	}
	target := h.Find(o.ToRevision)
	switch {
	case o.ToRevision == 0 && len(h.Revisions) < 2:
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revision before the current one (%d) to go back to", o.Namespace, o.Name, cur.Revision)
	case o.ToRevision == 0:
		target = h.Revisions[len(h.Revisions)-2]
	case target == nil:
		return fmt.Errorf("revision %d of ManifestWorkReplicaSet %s/%s is not kept (kept: %s): choose one of them with --to-revision", o.ToRevision, o.Namespace, o.Name, h.Numbers())
	case target == cur:
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s is at revision %d already", o.Namespace, o.Name, cur.Revision)
	}
	content, err := revision.Decode(target)
	if err != nil {
		return err
	}
	hash := target.Labels[revision.HashLabel]
	if o.DryRun == cli.DryRunClient {
		fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s/%s would go back from revision %d to revision %d (%s) (dry run)\n", o.Namespace, o.Name, cur.Revision, target.Revision, hash)
		return nil
	}
	set := h.Set
	content.ApplyTo(set)
	var opts []client.UpdateOption
	suffix := ""
	if o.DryRun == cli.DryRunServer {
		opts, suffix = append(opts, client.DryRunAll), " (server dry run)"
	}
	if err := c.Update(ctx, set, opts...); err != nil {
		if apierrors.IsConflict(err) {
			return &conflictError{msg: fmt.Sprintf("ManifestWorkReplicaSet %s/%s changed while it was being rolled back: run the command again", o.Namespace, o.Name), err: err}
		}
		return fmt.Errorf("write ManifestWorkReplicaSet %s/%s on %s: %w", o.Namespace, o.Name, cfg.Host, err)
	}
	gated := ""
	if p, _ := rolloutv1alpha1.PolicyOf(set.Annotations); p.Gated() {
		gated = " and its gates (approve them with `kubectl ocm work rollout approve`)"
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s/%s rolled back from revision %d to revision %d (%s)%s; the hub rolls it out with the set's rollout strategy%s: follow it with `kubectl ocm work rollout status %s -n %s`\n",
		o.Namespace, o.Name, cur.Revision, target.Revision, hash, suffix, gated, o.Name, o.Namespace)
	return nil
}
