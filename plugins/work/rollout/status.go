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

	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
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

// Run prints the rollout.
func (o *StatusOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	r, err := readCurrentRollout(ctx, o.ErrOut, c, o.Namespace, o.Name, true)
	if err != nil {
		return err
	}
	report := r.Report()
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

// StagesTable renders the stages of a rollout: PLACEMENT, STAGE, CLUSTERS
// (up to three names and a count), UPDATED (of all), SUCCEEDED, FAILED,
// BEFORE and AFTER (the gates' states; "-" without such a gate).
func StagesTable(r *setstate.StatusReport) *metav1.Table {
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
