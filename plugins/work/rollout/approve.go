package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// ApproveOptions are the flags and arguments of `kubectl ocm work rollout
// approve`.
type ApproveOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	// Stage is the stage whose gate to open; empty: the gate the rollout
	// waits at.
	Stage string
	// Gate is Before or After; empty: the one the rollout waits at on
	// Stage, else the stage's first gate.
	Gate string
	// Placement narrows the stage to one placementRef.
	Placement string
	// Message is recorded with the approval.
	Message string
}

func newCmdApprove(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ApproveOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}}
	cmd := &cobra.Command{
		Use:   "approve NAME [--stage STAGE] [--gate Before|After] [-n NAMESPACE]",
		Short: "Open a gate of the staged rollout of ManifestWorkReplicaSet NAME",
		Long: `Open a gate of the rollout of the current revision of ManifestWorkReplicaSet
NAME: without --stage, the gate the rollout waits at; with it, a gate of that
stage (see kubectl ocm work rollout status), which may be approved before the
rollout reaches it.

The approval is a RolloutApproval (rollout.kubectl-ocm.io) in the set's
namespace that records who approved; whoever may create RolloutApprovals there
may approve (ClusterRole open-cluster-management:rollout-approver). It holds
for the current revision only: a new template or an undo closes every gate
again.`,
		Example: cli.Examples(`
			# Let the rollout of web in namespace apps go past the gate it waits at
			kubectl ocm work rollout approve web -n apps

			# Approve stage prod before the rollout gets there, with a note
			kubectl ocm work rollout approve web -n apps --stage prod --message "change 4711"`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.Stage, "stage", "", "The stage whose gate to open; empty: the gate the rollout waits at.")
	cmd.Flags().StringVar(&o.Gate, "gate", "", "Before or After; empty: the gate of --stage the rollout waits at, else its first gate.")
	cmd.Flags().StringVar(&o.Placement, "placement", "", "The placementRef whose stage it is, when the set has several.")
	cmd.Flags().StringVar(&o.Message, "message", "", "Why, recorded with the approval.")
	return cmd
}

// Complete records NAME and the namespace.
func (o *ApproveOptions) Complete(_ *cobra.Command, args []string) error { return o.complete(args) }

// Validate checks the flags.
func (o *ApproveOptions) Validate() error {
	errs := []error{workargs.ValidateName(o.Name)}
	if o.Gate != "" && o.Gate != string(rollout.GateBefore) && o.Gate != string(rollout.GateAfter) {
		errs = append(errs, fmt.Errorf("--gate %q: must be Before or After", o.Gate))
	}
	if o.Gate != "" && o.Stage == "" {
		errs = append(errs, errors.New("--gate needs --stage: without it, the gate the rollout waits at is approved"))
	}
	if len(o.Message) > 1024 {
		errs = append(errs, fmt.Errorf("--message: %d characters, at most 1024", len(o.Message)))
	}
	return errors.Join(errs...)
}

// gateRef is one gate of one placement's rollout.
type gateRef struct {
	placement string
	gate      rollout.Gate
}

// Run creates the RolloutApprovals.
func (o *ApproveOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	fr, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, false)
	if err == nil && fr.WorksHidden && o.Stage == "" {
		err = fmt.Errorf("you may not list the ManifestWorks of ManifestWorkReplicaSet %s/%s, so the gate its rollout waits at is unknown here: name the stage with --stage (see kubectl ocm work rollout status)", o.Namespace, o.Name)
	}
	if err != nil {
		return err
	}
	targets, err := o.targets(fr)
	if err != nil {
		return err
	}
	user, err := cli.WhoAmI(ctx, c)
	if err != nil {
		return fmt.Errorf("ask %s who you are (SelfSubjectReview), to record you as the approver: %w", cfg.Host, err)
	}
	for _, t := range targets {
		if a := fr.Approval(t.placement, t.gate.Stage, t.gate.Type); a != nil {
			fmt.Fprintf(o.Out, "Gate %s of revision %d (placement %s) was already approved by %s\n", t.gate, fr.Number, t.placement, a.Spec.Approver)
			continue
		}
		a := &rolloutv1alpha1.RolloutApproval{
			ObjectMeta: metav1.ObjectMeta{Name: approvalName(o.Name, fr.Number, t.placement, t.gate.Stage, t.gate.Type), Namespace: o.Namespace,
				Labels: map[string]string{revision.SetLabel: revision.SetLabelValue(o.Name)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet",
					Name: fr.Set.Name, UID: fr.Set.UID, BlockOwnerDeletion: ptr.To(false)}}},
			Spec: rolloutv1alpha1.RolloutApprovalSpec{ManifestWorkReplicaSet: o.Name, Revision: fr.Number, Placement: t.placement,
				Stage: t.gate.Stage, Gate: t.gate.Type, Approver: user, Message: o.Message},
		}
		if err := c.Create(ctx, a); err != nil {
			if apierrors.IsForbidden(err) {
				return fmt.Errorf("approve gate %s of ManifestWorkReplicaSet %s/%s: %w; an approver needs to create RolloutApprovals in namespace %s (ClusterRole open-cluster-management:rollout-approver)",
					t.gate, o.Namespace, o.Name, err, o.Namespace)
			}
			return fmt.Errorf("approve gate %s of ManifestWorkReplicaSet %s/%s on %s: %w", t.gate, o.Namespace, o.Name, cfg.Host, err)
		}
		fmt.Fprintf(o.Out, "Gate %s of revision %d (placement %s) approved by %s; follow the rollout with `kubectl ocm work rollout status %s -n %s`\n",
			t.gate, fr.Number, t.placement, user, o.Name, o.Namespace)
	}
	return nil
}

// targets are the gates to approve: those the rollout waits at, or the
// gate of --stage in every placement (or --placement) that has it.
func (o *ApproveOptions) targets(fr *setstate.Rollout) ([]gateRef, error) {
	ref := fmt.Sprintf("ManifestWorkReplicaSet %s/%s", o.Namespace, o.Name)
	if !fr.Policy.Gated() {
		return nil, fmt.Errorf("%s has no gates, so nothing to approve: gates are set with its annotation %s (Before, After or Before,After)",
			ref, rolloutv1alpha1.GatesAnnotation)
	}
	var placements []setstate.Placement
	for _, p := range fr.Placements {
		if o.Placement == "" || p.Name == o.Placement {
			placements = append(placements, p)
		}
	}
	if len(placements) == 0 {
		names := make([]string, 0, len(fr.Placements))
		for _, p := range fr.Placements {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("--placement %s: %s has no such placementRef (it has: %s)", o.Placement, ref, strings.Join(names, ", "))
	}
	var out []gateRef
	if o.Stage == "" {
		for _, p := range placements {
			if p.Result.Waiting != nil {
				out = append(out, gateRef{placement: p.Name, gate: *p.Result.Waiting})
			}
		}
		if len(out) == 0 {
			state, msg := fr.State()
			return nil, fmt.Errorf("the rollout of revision %d of %s waits at no gate (%s%s): name a stage with --stage to approve it ahead",
				fr.Number, ref, state, map[bool]string{true: ": " + msg, false: ""}[msg != ""])
		}
		return out, nil
	}
	var known []string
	for _, p := range placements {
		s := findStage(p.Result.Stages, o.Stage)
		if s == nil {
			known = append(known, fmt.Sprintf("placement %s: %s", p.Name, strings.Join(stageNames(p.Result.Stages), ", ")))
			continue
		}
		t := rollout.GateType(o.Gate)
		if t == "" {
			t = fr.NextGate(p, o.Stage)
		}
		if (t == rollout.GateBefore && !fr.Policy.Before) || (t == rollout.GateAfter && !fr.Policy.After) {
			return nil, fmt.Errorf("%s has no %s gates (annotation %s=%s)", ref, t, rolloutv1alpha1.GatesAnnotation, fr.Set.Annotations[rolloutv1alpha1.GatesAnnotation])
		}
		out = append(out, gateRef{placement: p.Name, gate: rollout.Gate{Stage: o.Stage, Type: t}})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("stage %q does not exist in the rollout of %s; its stages are: %s", o.Stage, ref, strings.Join(known, "; "))
	}
	return out, nil
}
