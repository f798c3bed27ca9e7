package work

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// standardConditions are shown in their own columns.
var standardConditions = []string{workv1.ManifestApplied, workv1.ManifestAvailable, workv1.ManifestStatusFeedbackSynced, workv1.ManifestDrifted}

// Run prints the state of each manifest of the work.
func (o *StatusOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	cluster := o.Clusters[0]
	work := &workv1.ManifestWork{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, work); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWork %s not found in cluster %s: list the works with `kubectl ocm work get --clusters %s`", o.Name, cluster, cluster)
		}
		return fmt.Errorf("read ManifestWork %s in cluster %s on %s: %w", o.Name, cluster, cfg.Host, err)
	}
	status := workreport.New(work)
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, status)
	}
	if p := status.Payload; p != nil {
		// The manifests of a large payload are known once its agent staged it.
		fmt.Fprintf(o.Out, "Payload: %s\n", p.Summary())
		if p.Staged == string(metav1.ConditionFalse) && p.Message != "" {
			fmt.Fprintf(o.Out, "PayloadStaged: %s: %s\n", p.Reason, p.Message)
		}
		if len(status.Manifests) == 0 {
			fmt.Fprintln(o.Out, "No manifest of the payload is reported yet: the work agent reports them once it has staged the payload.")
			return nil
		}
		fmt.Fprintln(o.Out)
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(StatusTable(status, time.Now()), o.Out)
}

// StatusTable renders s as a kubectl table: KIND, NAMESPACE/NAME, APPLIED,
// AVAILABLE, FEEDBACK, LAST DRIFT, MESSAGE, and CONDITIONS (the other
// conditions, such as those of condition rules) when any manifest has one.
func StatusTable(s *workreport.Report, now time.Time) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Kind", Type: "string"}, {Name: "Namespace/Name", Type: "string"},
		{Name: "Applied", Type: "string"}, {Name: "Available", Type: "string"},
		{Name: "Feedback", Type: "string"}, {Name: "Last Drift", Type: "string"},
		{Name: "Message", Type: "string"},
	}}
	others := false
	for _, m := range s.Manifests {
		kind := m.Kind
		if m.Group != "" {
			kind += "." + m.Group
		}
		name := m.Name
		if m.Namespace != "" {
			name = m.Namespace + "/" + name
		}
		lastDrift := ""
		if m.LastDrift != nil {
			lastDrift = duration.HumanDuration(now.Sub(m.LastDrift.Time)) + " ago (" + m.DriftReason + ")"
		}
		other := otherConditions(m.Conditions)
		others = others || other != ""
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
			kind, name, m.Applied, m.Available, feedbackString(m.Feedback), lastDrift, m.Message, other,
		}})
	}
	if others {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Conditions", Type: "string"})
	} else {
		for i := range table.Rows {
			table.Rows[i].Cells = table.Rows[i].Cells[:7]
		}
	}
	return table
}

// feedbackString renders feedback as name=value pairs sorted by name.
func feedbackString(feedback map[string]any) string {
	names := make([]string, 0, len(feedback))
	for n := range feedback {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		var v string
		switch x := feedback[n].(type) {
		case int64:
			v = strconv.FormatInt(x, 10)
		default:
			v = fmt.Sprint(x)
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, ", ")
}

// otherConditions renders the conditions without a column of their own as
// Type=Status pairs.
func otherConditions(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		if !slices.Contains(standardConditions, c.Type) {
			parts = append(parts, c.Type+"="+string(c.Status))
		}
	}
	return strings.Join(parts, ",")
}
