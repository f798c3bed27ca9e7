package work

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run lists the works, or with --replicaset the ManifestWorkReplicaSets.
func (o *GetOptions) Run(ctx context.Context) error {
	if o.ReplicaSet {
		return o.runReplicaSets(ctx)
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	list := &workv1.ManifestWorkList{}
	namespaces := o.Clusters
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		part := &workv1.ManifestWorkList{}
		opts := []client.ListOption{client.InNamespace(ns)}
		if o.Name != "" {
			opts = append(opts, client.MatchingFields{"metadata.name": o.Name})
		}
		if err := c.List(ctx, part, opts...); err != nil {
			if apierrors.IsForbidden(err) && ns == metav1.NamespaceAll {
				return fmt.Errorf("list ManifestWorks of every cluster on %s: %w; to list those of some clusters, use --clusters NAME[,NAME...]", cfg.Host, err)
			}
			return fmt.Errorf("list ManifestWorks on %s: %w", cfg.Host, err)
		}
		list.Items = append(list.Items, part.Items...)
	}
	slices.SortFunc(list.Items, func(a, b workv1.ManifestWork) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, workv1.GroupVersion.WithKind("ManifestWork"),
		func() (*metav1.Table, error) { return WorksTable(list.Items, time.Now()), nil },
		cli.ListOutput{Empty: o.notFound()})
}

// notFound is the message printed when no work matches.
func (o *GetOptions) notFound() string {
	what := "No works"
	if o.Name != "" {
		what = "No work " + o.Name
	}
	switch len(o.Clusters) {
	case 0:
		return what + " found."
	case 1:
		return what + " found in cluster " + o.Clusters[0] + "."
	}
	return what + " found in clusters " + strings.Join(o.Clusters, ",") + "."
}

// WorksTable renders works as a kubectl table: NAME, CLUSTER, MANIFESTS,
// APPLIED, AVAILABLE, DRIFTED (how many manifests drifted), AGE, then
// PROGRESSING, DEGRADED, COMPLETE and DELETING at priority 1, which the
// table printer shows only with -o wide. When a work goes as a large
// payload, MANIFESTS counts the payload's manifests and a PAYLOAD column
// before AGE says its size and how far its agent staged it
// (workreport.Payload).
func WorksTable(works []workv1.ManifestWork, now time.Time) *metav1.Table {
	payloads := make([]*workreport.Payload, len(works))
	large := false
	for i := range works {
		payloads[i] = workreport.PayloadOf(&works[i])
		large = large || payloads[i] != nil
	}
	cols := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Cluster", Type: "string"}, {Name: "Manifests", Type: "integer"},
		{Name: "Applied", Type: "string"}, {Name: "Available", Type: "string"}, {Name: "Drifted", Type: "string"},
	}
	if large {
		cols = append(cols, metav1.TableColumnDefinition{Name: "Payload", Type: "string"})
	}
	cols = append(cols, metav1.TableColumnDefinition{Name: "Age", Type: "date"},
		metav1.TableColumnDefinition{Name: "Progressing", Type: "string", Priority: 1}, metav1.TableColumnDefinition{Name: "Degraded", Type: "string", Priority: 1},
		metav1.TableColumnDefinition{Name: "Complete", Type: "string", Priority: 1}, metav1.TableColumnDefinition{Name: "Deleting", Type: "string", Priority: 1})
	table := &metav1.Table{ColumnDefinitions: cols}
	for i := range works {
		w := &works[i]
		conds := w.Status.Conditions
		manifests := int64(len(w.Spec.Workload.Manifests))
		if p := payloads[i]; p != nil && p.Chunks > 0 {
			manifests = p.Manifests
		}
		cells := []any{
			w.Name, w.Namespace, manifests,
			conditionStatus(conds, workv1.WorkApplied), conditionStatus(conds, workv1.WorkAvailable), drifted(w),
		}
		if large {
			summary := ""
			if payloads[i] != nil {
				summary = payloads[i].Summary()
			}
			cells = append(cells, summary)
		}
		cells = append(cells, duration.HumanDuration(now.Sub(w.CreationTimestamp.Time)),
			conditionStatus(conds, workv1.WorkProgressing), conditionStatus(conds, workv1.WorkDegraded),
			conditionStatus(conds, workv1.WorkComplete), conditionStatus(conds, workv1.WorkDeleting))
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: w}})
	}
	return table
}

// drifted is how many manifests of w drifted on the managed cluster (have a
// True Drifted condition, which the agent keeps after restoring the object),
// or "" when none did.
func drifted(w *workv1.ManifestWork) string {
	count := 0
	for _, m := range w.Status.ResourceStatus.Manifests {
		if meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestDrifted) {
			count++
		}
	}
	if count == 0 {
		return ""
	}
	return strconv.Itoa(count)
}

// conditionStatus returns the status of condition typ, "" when absent.
func conditionStatus(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return ""
}
