package placement

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement/explain"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ExplainOptions are the options of `kubectl ocm placement explain`.
type ExplainOptions struct{ NamedOptions }

// Run reads what the scheduler reads, runs the scheduling rules and prints
// each cluster's fate.
func (o *ExplainOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	report, warnings, err := explain.Read(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(o.ErrOut, "Warning: "+w)
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, report)
	}
	return PrintExplanation(o.Out, report)
}

// PrintExplanation writes the report: a summary, any notes, and a table of
// CLUSTER, SELECTED, STAGE, one column per prioritizer, TOTAL and REASON.
func PrintExplanation(out io.Writer, r explain.Explanation) error {
	fmt.Fprintf(out, "Placement %s/%s: %d cluster(s) selected by the scheduling rules, %d in the written decisions\n",
		r.Namespace, r.Placement, len(r.Selected), len(r.Decided))
	if r.Satisfied.Type != "" {
		fmt.Fprintf(out, "%s=%s (%s) %s\n", r.Satisfied.Type, r.Satisfied.Status, r.Satisfied.Reason, r.Satisfied.Message)
	}
	if r.Misconfigured.Status == metav1.ConditionTrue {
		fmt.Fprintf(out, "%s=%s (%s) %s\n", r.Misconfigured.Type, r.Misconfigured.Status, r.Misconfigured.Reason, r.Misconfigured.Message)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(out, "Note: "+n)
	}
	if len(r.Clusters) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(ExplanationTable(r.Clusters), out)
}

// ExplanationTable renders the clusters as a kubectl table.
func ExplanationTable(clusters []explain.ClusterExplanation) *metav1.Table {
	keySet := map[string]bool{}
	for _, c := range clusters {
		for k := range c.Scores {
			keySet[k] = true
		}
	}
	keys := make([]string, 0, len(keySet))
	for k := range keySet {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cols := []metav1.TableColumnDefinition{{Name: "Cluster", Type: "string"}, {Name: "Selected", Type: "string"}, {Name: "Stage", Type: "string"}}
	for _, k := range keys {
		cols = append(cols, metav1.TableColumnDefinition{Name: k, Type: "string"})
	}
	cols = append(cols, metav1.TableColumnDefinition{Name: "Total", Type: "string"}, metav1.TableColumnDefinition{Name: "Reason", Type: "string"})
	table := &metav1.Table{ColumnDefinitions: cols}
	for _, c := range clusters {
		selected := "no"
		if c.Selected {
			selected = "yes"
		}
		cells := []any{c.Cluster, selected, c.Stage}
		for _, k := range keys {
			if v, ok := c.Scores[k]; ok {
				cells = append(cells, strconv.FormatInt(v, 10))
			} else {
				cells = append(cells, "")
			}
		}
		total := ""
		if len(c.Scores) > 0 {
			total = strconv.FormatInt(c.Total, 10)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: append(cells, total, c.Reason)})
	}
	return table
}
