package rollout

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// PauseResumeAbortOptions are the flags and arguments of `kubectl ocm work rollout
// pause|resume|abort`.
type PauseResumeAbortOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	verb string
	// Rollback (abort) also rolls the changed clusters back.
	Rollback bool
}

func newCmdPauseResumeAbort(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, verb string) *cobra.Command {
	o := &PauseResumeAbortOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}, verb: verb}
	cmd := &cobra.Command{
		Use:               verb + " NAME [-n NAMESPACE]",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	switch verb {
	case "pause":
		cmd.Short = "Pause the rollout of ManifestWorkReplicaSet NAME: no further cluster is started"
		cmd.Long = `Pause the rollout of ManifestWorkReplicaSet NAME: the hub starts no further
cluster (creates or updates no ManifestWork) until it is resumed; the clusters
already started keep what they have. Sets the set's annotation ` + rolloutv1alpha1.PausedAnnotation + `.`
		cmd.Example = cli.Examples(`
			# Hold the rollout of web in namespace apps
			kubectl ocm work rollout pause web -n apps`)
	case "resume":
		cmd.Short = "Resume the paused or aborted rollout of ManifestWorkReplicaSet NAME"
		cmd.Long = `Resume the rollout of ManifestWorkReplicaSet NAME after a pause or an abort:
the hub starts clusters again, as the set's strategy and gates allow.`
		cmd.Example = cli.Examples(`
			# Let the rollout of web in namespace apps go on
			kubectl ocm work rollout resume web -n apps`)
	case "abort":
		cmd.Use = verb + " NAME [--rollback] [-n NAMESPACE]"
		cmd.Short = "Abort the rollout of ManifestWorkReplicaSet NAME, leaving each cluster where it is or rolling the changed ones back"
		cmd.Long = `Abort the rollout of the current revision of ManifestWorkReplicaSet NAME: the
hub starts no further cluster with it (sets the annotation ` + rolloutv1alpha1.AbortedAnnotation + `).
Each cluster keeps what it has, or, with --rollback, the set goes back to its
previous revision and the clusters that got the aborted one get the previous
one back at once, without waiting at any gate; the others are not touched.
A new template, an undo or resume starts rolling out again.`
		cmd.Example = cli.Examples(`
			# Stop the rollout of web in namespace apps where it is
			kubectl ocm work rollout abort web -n apps

			# Stop it and put the clusters it changed back on the previous revision
			kubectl ocm work rollout abort web -n apps --rollback`)
		cmd.Flags().BoolVar(&o.Rollback, "rollback", false, "Also roll the clusters that got the aborted revision back to the previous one.")
	}
	return cmd
}

// Complete records NAME and the namespace.
func (o *PauseResumeAbortOptions) Complete(_ *cobra.Command, args []string) error {
	return o.complete(args)
}

// Validate checks NAME.
func (o *PauseResumeAbortOptions) Validate() error { return workargs.ValidateName(o.Name) }

// Run writes the set's annotations.
func (o *PauseResumeAbortOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	h, err := setstate.ReadHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	set := h.Set
	ref := fmt.Sprintf("ManifestWorkReplicaSet %s/%s", o.Namespace, o.Name)
	if set.Annotations == nil {
		set.Annotations = map[string]string{}
	}
	a := set.Annotations
	var done string
	switch o.verb {
	case "pause":
		if a[rolloutv1alpha1.PausedAnnotation] == "true" {
			fmt.Fprintf(o.Out, "%s is paused already\n", ref)
			return nil
		}
		a[rolloutv1alpha1.PausedAnnotation] = "true"
		done = fmt.Sprintf("%s paused: no further cluster is started; resume it with `kubectl ocm work rollout resume %s -n %s`", ref, o.Name, o.Namespace)
	case "resume":
		_, paused := a[rolloutv1alpha1.PausedAnnotation]
		_, aborted := a[rolloutv1alpha1.AbortedAnnotation]
		if !paused && !aborted {
			fmt.Fprintf(o.Out, "%s is neither paused nor aborted\n", ref)
			return nil
		}
		delete(a, rolloutv1alpha1.PausedAnnotation)
		delete(a, rolloutv1alpha1.AbortedAnnotation)
		done = fmt.Sprintf("%s resumed", ref)
	case "abort":
		fr, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, false)
		if err != nil {
			return err
		}
		set = fr.Set
		cur := fr.Revision
		var prev *appsv1.ControllerRevision
		if o.Rollback {
			for _, cr := range fr.Revisions {
				if cr != cur {
					prev = cr
				}
			}
			if prev == nil {
				return fmt.Errorf("%s has no revision before the current one (%d) to roll back to: abort without --rollback", ref, cur.Revision)
			}
		}
		if err := revision.AbortTo(set, cur.Revision, prev); err != nil {
			return err
		}
		done = fmt.Sprintf("%s: the rollout of revision %d is aborted; each cluster keeps what it has", ref, cur.Revision)
		if prev != nil {
			done = fmt.Sprintf("%s: the rollout of revision %d is aborted and the set rolled back to revision %d (%s); the clusters that got revision %d get it back without waiting at a gate",
				ref, cur.Revision, prev.Revision, prev.Labels[revision.HashLabel], cur.Revision)
		}
	}
	if err := c.Update(ctx, set); err != nil {
		if apierrors.IsConflict(err) {
			return &conflictError{msg: fmt.Sprintf("%s changed while it was being updated: run the command again", ref), err: err}
		}
		return fmt.Errorf("write %s on %s: %w", ref, cfg.Host, err)
	}
	fmt.Fprintln(o.Out, done)
	return nil
}

// NewPauseResumeAbortOptions returns the options of verb pause, resume or
// abort, for callers that build them without a command line (SetTarget).
func NewPauseResumeAbortOptions(verb string, streams genericiooptions.IOStreams) *PauseResumeAbortOptions {
	return &PauseResumeAbortOptions{IOStreams: streams, verb: verb}
}

// conflictError says that a set changed under a verb's write, in the verb's
// words, and unwraps to the API server's conflict: a caller may run the verb
// again (apierrors.IsConflict).
type conflictError struct {
	msg string
	err error
}

func (e *conflictError) Error() string { return e.msg }
func (e *conflictError) Unwrap() error { return e.err }
