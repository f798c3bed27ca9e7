package work

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

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
	t.Namespace, _, err = namespaceClusters(t.getter, nil, false)
	return err
}

// RolloutStatusOptions are the flags and arguments of `kubectl ocm work
// rollout status`.
type RolloutStatusOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	// Output is json or yaml; empty prints the stages as a table.
	Output string
}

func newCmdRolloutStatus(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &RolloutStatusOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}}
	cmd := &cobra.Command{
		Use:   "status NAME [-n NAMESPACE]",
		Short: "Show the stages of the rollout of ManifestWorkReplicaSet NAME, their clusters and health, and the gate it waits at",
		Long: `Show the rollout of the current revision of ManifestWorkReplicaSet NAME, for
each of its placements: its stages (one per decision group, the mandatory ones
first, or batches of the set's stage size), their clusters, how many run the
current revision and succeeded or failed, and the state of each stage's gates:
Approved (and by whom), Waiting (the rollout waits there: approve it with
kubectl ocm work rollout approve), or Closed (not reached yet).`,
		Example: cli.Examples(`
			# Where the rollout of web in namespace apps stands
			kubectl ocm work rollout status web -n apps

			# The same as YAML, with every cluster's state
			kubectl ocm work rollout status web -n apps -o yaml`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml. Empty prints a table.")
	return cmd
}

// Complete records NAME and the namespace.
func (o *RolloutStatusOptions) Complete(_ *cobra.Command, args []string) error {
	return o.complete(args)
}

// Validate checks the flags.
func (o *RolloutStatusOptions) Validate() error {
	errs := []error{validateWorkName(o.Name)}
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		errs = append(errs, fmt.Errorf("--output %q is not supported: use json or yaml", o.Output))
	}
	return errors.Join(errs...)
}

// RolloutReport is the rollout of a set's current revision.
type RolloutReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Revision and Hash identify the current revision.
	Revision int64  `json:"revision"`
	Hash     string `json:"hash"`
	// Gates are the set's gates (annotation rollout.kubectl-ocm.io/gates).
	Gates string `json:"gates,omitempty"`
	// State is Progressing, Complete, AwaitingApproval, Paused, Aborted or
	// InvalidRolloutStrategy; Message says more.
	State      string            `json:"state"`
	Message    string            `json:"message,omitempty"`
	Placements []PlacementReport `json:"placements"`
}

// PlacementReport is the rollout of one placementRef.
type PlacementReport struct {
	Name    string        `json:"name"`
	Error   string        `json:"error,omitempty"`
	Waiting string        `json:"waiting,omitempty"`
	Stages  []StageReport `json:"stages"`
}

// StageReport is one stage of a rollout.
type StageReport struct {
	Name      string          `json:"name"`
	Clusters  []ClusterReport `json:"clusters"`
	Updated   int             `json:"updated"`
	Succeeded int             `json:"succeeded"`
	Failed    int             `json:"failed"`
	Before    string          `json:"before,omitempty"`
	After     string          `json:"after,omitempty"`
}

// ClusterReport is one cluster of a stage.
type ClusterReport struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Run prints the rollout.
func (o *RolloutStatusOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	fr, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, true)
	if err != nil {
		return err
	}
	report := fr.report()
	switch o.Output {
	case "json":
		return cli.PrintJSON(o.Out, report)
	case "yaml":
		return cli.PrintYAML(o.Out, report)
	}
	gates := report.Gates
	if gates == "" {
		gates = "none"
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s/%s: revision %d (%s), gates: %s\n", o.Namespace, o.Name, report.Revision, report.Hash, gates)
	line := "Rollout: " + report.State
	if report.Message != "" {
		line += ": " + report.Message
	}
	fmt.Fprintln(o.Out, line)
	fmt.Fprintln(o.Out)
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(StagesTable(report), o.Out)
}

// report builds the RolloutReport of fr.
func (fr *fleetRollout) report() *RolloutReport {
	r := &RolloutReport{Name: fr.set.Name, Namespace: fr.set.Namespace, Revision: fr.number, Hash: fr.hash,
		Gates: fr.set.Annotations[rolloutv1alpha1.GatesAnnotation], Placements: []PlacementReport{}}
	r.State, r.Message = fr.state()
	gate := func(p string, s rollout.Stage, t rollout.GateType, st rollout.GateState) string {
		if st == rollout.GateApproved {
			if a := fr.approval(p, s.Name, t); a != nil {
				return "Approved by " + a.Spec.Approver
			}
		}
		return string(st)
	}
	for _, p := range fr.placements {
		pr := PlacementReport{Name: p.name, Stages: []StageReport{}}
		if p.err != nil {
			pr.Error = p.err.Error()
		}
		if w := p.result.Waiting; w != nil {
			pr.Waiting = w.String()
		}
		for _, s := range p.result.Stages {
			sr := StageReport{Name: s.Name, Clusters: []ClusterReport{},
				Before: gate(p.name, s, rollout.GateBefore, s.Before), After: gate(p.name, s, rollout.GateAfter, s.After)}
			for _, cl := range s.Clusters {
				sr.Clusters = append(sr.Clusters, ClusterReport{Name: cl.Name, State: string(cl.State)})
				switch cl.State {
				case rollout.ToApply:
					continue
				case rollout.Succeeded:
					sr.Succeeded++
				case rollout.Failed, rollout.TimeOut:
					sr.Failed++
				}
				sr.Updated++
			}
			pr.Stages = append(pr.Stages, sr)
		}
		r.Placements = append(r.Placements, pr)
	}
	return r
}

// StagesTable renders the stages of a rollout: PLACEMENT, STAGE, CLUSTERS
// (up to three names and a count), UPDATED (of all), SUCCEEDED, FAILED,
// BEFORE and AFTER (the gates' states; "-" without such a gate).
func StagesTable(r *RolloutReport) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Placement", Type: "string"}, {Name: "Stage", Type: "string"}, {Name: "Clusters", Type: "string"},
		{Name: "Updated", Type: "string"}, {Name: "Succeeded", Type: "integer"}, {Name: "Failed", Type: "integer"},
		{Name: "Before", Type: "string"}, {Name: "After", Type: "string"},
	}}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, p := range r.Placements {
		for _, s := range p.Stages {
			names := make([]string, 0, len(s.Clusters))
			for _, c := range s.Clusters {
				names = append(names, c.Name)
			}
			list := strings.Join(names, ",")
			if len(names) > 3 {
				list = fmt.Sprintf("%s +%d more", strings.Join(names[:3], ","), len(names)-3)
			}
			table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{p.Name, s.Name, dash(list),
				fmt.Sprintf("%d/%d", s.Updated, len(s.Clusters)), int64(s.Succeeded), int64(s.Failed), dash(s.Before), dash(s.After)}})
		}
	}
	return table
}

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

func newCmdRolloutApprove(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
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
	errs := []error{validateWorkName(o.Name)}
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
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	fr, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, false)
	if err == nil && fr.worksHidden && o.Stage == "" {
		err = fmt.Errorf("you may not list the ManifestWorks of ManifestWorkReplicaSet %s/%s, so the gate its rollout waits at is unknown here: name the stage with --stage (see kubectl ocm work rollout status)", o.Namespace, o.Name)
	}
	if err != nil {
		return err
	}
	targets, err := o.targets(fr)
	if err != nil {
		return err
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return fmt.Errorf("ask %s who you are (SelfSubjectReview), to record you as the approver: %w", cfg.Host, err)
	}
	user := review.Status.UserInfo.Username
	for _, t := range targets {
		if a := fr.approval(t.placement, t.gate.Stage, t.gate.Type); a != nil {
			fmt.Fprintf(o.Out, "Gate %s of revision %d (placement %s) was already approved by %s\n", t.gate, fr.number, t.placement, a.Spec.Approver)
			continue
		}
		a := &rolloutv1alpha1.RolloutApproval{
			ObjectMeta: metav1.ObjectMeta{Name: approvalName(o.Name, fr.number, t.placement, t.gate.Stage, t.gate.Type), Namespace: o.Namespace,
				Labels: map[string]string{revision.SetLabel: o.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet",
					Name: fr.set.Name, UID: fr.set.UID, BlockOwnerDeletion: ptr.To(false)}}},
			Spec: rolloutv1alpha1.RolloutApprovalSpec{ManifestWorkReplicaSet: o.Name, Revision: fr.number, Placement: t.placement,
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
			t.gate, fr.number, t.placement, user, o.Name, o.Namespace)
	}
	return nil
}

// targets are the gates to approve: those the rollout waits at, or the
// gate of --stage in every placement (or --placement) that has it.
func (o *ApproveOptions) targets(fr *fleetRollout) ([]gateRef, error) {
	ref := fmt.Sprintf("ManifestWorkReplicaSet %s/%s", o.Namespace, o.Name)
	if !fr.policy.Gated() {
		return nil, fmt.Errorf("%s has no gates, so nothing to approve: gates are set with its annotation %s (Before, After or Before,After)",
			ref, rolloutv1alpha1.GatesAnnotation)
	}
	var placements []placementRollout
	for _, p := range fr.placements {
		if o.Placement == "" || p.name == o.Placement {
			placements = append(placements, p)
		}
	}
	if len(placements) == 0 {
		names := make([]string, 0, len(fr.placements))
		for _, p := range fr.placements {
			names = append(names, p.name)
		}
		return nil, fmt.Errorf("--placement %s: %s has no such placementRef (it has: %s)", o.Placement, ref, strings.Join(names, ", "))
	}
	var out []gateRef
	if o.Stage == "" {
		for _, p := range placements {
			if p.result.Waiting != nil {
				out = append(out, gateRef{placement: p.name, gate: *p.result.Waiting})
			}
		}
		if len(out) == 0 {
			state, msg := fr.state()
			return nil, fmt.Errorf("the rollout of revision %d of %s waits at no gate (%s%s): name a stage with --stage to approve it ahead",
				fr.number, ref, state, map[bool]string{true: ": " + msg, false: ""}[msg != ""])
		}
		return out, nil
	}
	var known []string
	for _, p := range placements {
		s := findStage(p.result.Stages, o.Stage)
		if s == nil {
			known = append(known, fmt.Sprintf("placement %s: %s", p.name, strings.Join(stageNames(p.result.Stages), ", ")))
			continue
		}
		t := rollout.GateType(o.Gate)
		if t == "" {
			t = fr.nextGate(p, o.Stage)
		}
		if (t == rollout.GateBefore && !fr.policy.Before) || (t == rollout.GateAfter && !fr.policy.After) {
			return nil, fmt.Errorf("%s has no %s gates (annotation %s=%s)", ref, t, rolloutv1alpha1.GatesAnnotation, fr.set.Annotations[rolloutv1alpha1.GatesAnnotation])
		}
		out = append(out, gateRef{placement: p.name, gate: rollout.Gate{Stage: o.Stage, Type: t}})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("stage %q does not exist in the rollout of %s; its stages are: %s", o.Stage, ref, strings.Join(known, "; "))
	}
	return out, nil
}

// ControlOptions are the flags and arguments of `kubectl ocm work rollout
// pause|resume|abort`.
type ControlOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	verb string
	// Rollback (abort) also rolls the changed clusters back.
	Rollback bool
}

func newCmdRolloutControl(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, verb string) *cobra.Command {
	o := &ControlOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}, verb: verb}
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
func (o *ControlOptions) Complete(_ *cobra.Command, args []string) error { return o.complete(args) }

// Validate checks NAME.
func (o *ControlOptions) Validate() error { return validateWorkName(o.Name) }

// Run writes the set's annotations.
func (o *ControlOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	h, err := readHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	set := h.set
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
		set = fr.set
		cur := fr.cur
		var prev *appsv1.ControllerRevision
		if o.Rollback {
			for _, cr := range fr.revisions {
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
			return fmt.Errorf("%s changed while it was being updated: run the command again", ref)
		}
		return fmt.Errorf("write %s on %s: %w", ref, cfg.Host, err)
	}
	fmt.Fprintln(o.Out, done)
	return nil
}
