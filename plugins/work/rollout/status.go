package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// StatusOptions are the flags and arguments of `kubectl ocm work
// rollout status`.
type StatusOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
	// Output is json or yaml; empty prints the stages as a table.
	Output string
}

func newCmdStatus(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &StatusOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}}
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
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints a table.", cli.ReportFormats)
	return cmd
}

// Complete records NAME and the namespace.
func (o *StatusOptions) Complete(_ *cobra.Command, args []string) error {
	return o.complete(args)
}

// Validate checks the flags.
func (o *StatusOptions) Validate() error {
	errs := []error{workargs.ValidateName(o.Name)}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats))...)
}

// StatusReport is the rollout of a set's current revision.
type StatusReport struct {
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
func (o *StatusOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	fr, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, true)
	if err != nil {
		return err
	}
	report := fr.report()
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, report)
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

// report builds the StatusReport of fr.
func (fr *fleetRollout) report() *StatusReport {
	r := &StatusReport{Name: fr.set.Name, Namespace: fr.set.Namespace, Revision: fr.number, Hash: fr.hash,
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
func StagesTable(r *StatusReport) *metav1.Table {
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

// Status reads the rollout of ManifestWorkReplicaSet namespace/name's
// current revision, as `kubectl ocm work rollout status -o json` reports it.
func Status(ctx context.Context, c client.Client, namespace, name string) (*StatusReport, error) {
	fr, err := readRollout(ctx, c, namespace, name, true)
	if err != nil {
		return nil, err
	}
	return fr.report(), nil
}
