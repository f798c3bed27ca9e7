// Package rollout implements `kubectl ocm work rollout`: status shows where
// the rollout of a ManifestWorkReplicaSet stands, approve opens its gates,
// pause, resume and abort stop and start it, history lists its revisions and
// undo rolls it back to one of them. The rollout is read, from what the
// caller may read, by pkg/rollout/setstate, as the hub controller computes
// it.
package rollout

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// NewCmdRollout returns `kubectl ocm work rollout` with its subcommands.
// getter selects the hub (--kubeconfig, --context).
func NewCmdRollout(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow and steer the rollout of a ManifestWorkReplicaSet: status, approve, pause, resume, abort, history, undo",
		Long: `Follow and steer the rollout of a ManifestWorkReplicaSet.

A Progressive or ProgressivePerGroup rollout can run in stages held at gates
(annotation ` + rolloutv1alpha1.GatesAnnotation + `: Before, After or Before,After): one stage per
decision group, or batches of ` + rolloutv1alpha1.StageSizeAnnotation + ` clusters. status shows
where it stands, approve opens a gate; pause, resume and abort stop and start
it; annotation ` + rolloutv1alpha1.FailureStrategyAnnotation + ` (Abort or Rollback) aborts it
when its failures pass maxFailures.

Every template a ManifestWorkReplicaSet has had (with its take-over rule) is
kept by the hub as a ControllerRevision of the set's namespace, numbered as a
Deployment numbers its revisions: the newest 10 besides the current one, or as
many as the set's annotation ` + revision.HistoryLimitAnnotation + ` says.
Each ManifestWork of the set records the revision it was written from.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdStatus(getter, streams), newCmdApprove(getter, streams),
		newCmdPauseResumeAbort(getter, streams, "pause"), newCmdPauseResumeAbort(getter, streams, "resume"),
		newCmdPauseResumeAbort(getter, streams, "abort"),
		newCmdHistory(getter, streams), newCmdUndo(getter, streams))
	return cmd
}

// rolloutTarget is the set a rollout verb acts on.
type rolloutTarget struct {
	getter    genericclioptions.RESTClientGetter
	Name      string
	Namespace string
}

// complete records NAME and the namespace.
func (t *rolloutTarget) complete(args []string) error {
	t.Name = cli.FirstArg(args)
	var err error
	t.Namespace, _, err = workargs.NamespaceClusters(t.getter, nil, false)
	return err
}

// SetTarget makes a verb's options act on ManifestWorkReplicaSet
// namespace/name of the hub getter selects, as Complete does from the
// command line; for callers that build the options themselves.
func (t *rolloutTarget) SetTarget(getter genericclioptions.RESTClientGetter, namespace, name string) {
	t.getter, t.Namespace, t.Name = getter, namespace, name
}
