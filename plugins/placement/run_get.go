package placement

import (
	"context"
	"errors"
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
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement/explain"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run lists the Placements, or shows one.
func (o *GetOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	list := &clusterv1beta1.PlacementList{}
	ns := o.Namespace
	if o.AllNamespaces && o.Name == "" {
		ns = ""
	}
	if err := cli.GetOrList(ctx, c, list, &list.Items, ns, o.Name, cli.Lookup{Kind: "Placement", Host: cfg.Host, NotFound: explain.NotFound(o.Namespace, o.Name)}); err != nil {
		return err
	}
	empty := "No placements found in namespace " + o.Namespace + "."
	if o.AllNamespaces {
		empty = "No placements found."
	}
	return cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, clusterv1beta1.GroupVersion.WithKind("Placement"),
		func() (*metav1.Table, error) { return PlacementsTable(list.Items, time.Now()), nil },
		cli.ListOutput{Empty: empty, WithNamespace: o.AllNamespaces, Named: o.Name != ""})
}

// PlacementsTable renders placements as a kubectl table: NAME, SUCCEEDED
// (PlacementSatisfied), REASON, SELECTED, AGE, then MISCONFIGURED,
// CLUSTERSETS and COUNT (numberOfClusters) at priority 1, which the table
// printer shows only with -o wide. Each row holds its Placement, so
// the table printer's WithNamespace option can prepend NAMESPACE.
func PlacementsTable(items []clusterv1beta1.Placement, now time.Time) *metav1.Table {
	cols := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Succeeded", Type: "string"}, {Name: "Reason", Type: "string"},
		{Name: "Selected", Type: "integer"}, {Name: "Age", Type: "date"},
		{Name: "Misconfigured", Type: "string", Priority: 1}, {Name: "ClusterSets", Type: "string", Priority: 1},
		{Name: "Count", Type: "string", Priority: 1},
	}
	table := &metav1.Table{ColumnDefinitions: cols}
	for i := range items {
		p := &items[i]
		status, reason := "", ""
		if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied); c != nil {
			status, reason = string(c.Status), c.Reason
		}
		misconfigured := ""
		if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil {
			misconfigured = string(c.Status)
		}
		count := "all"
		if p.Spec.NumberOfClusters != nil {
			count = strconv.Itoa(int(*p.Spec.NumberOfClusters))
		}
		sets := strings.Join(p.Spec.ClusterSets, ",")
		if sets == "" {
			sets = "<bound>"
		}
		row := metav1.TableRow{Cells: []any{
			p.Name, status, reason, int64(p.Status.NumberOfSelectedClusters),
			duration.HumanDuration(now.Sub(p.CreationTimestamp.Time)), misconfigured, sets, count,
		}}
		row.Object = runtime.RawExtension{Object: p}
		table.Rows = append(table.Rows, row)
	}
	return table
}

// DecisionsOptions are the options of `kubectl ocm placement decisions`.
type DecisionsOptions struct{ NamedOptions }

// Run lists the decisions of the Placement.
func (o *DecisionsOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	if _, err := explain.Placement(ctx, c, o.Namespace, o.Name); err != nil {
		return err
	}
	list, err := decisionsOf(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if o.Output != "" {
		for i := range list.Items {
			list.Items[i].SetGroupVersionKind(clusterv1beta1.GroupVersion.WithKind("PlacementDecision"))
			list.Items[i].ManagedFields = nil
		}
		list.SetGroupVersionKind(clusterv1beta1.GroupVersion.WithKind("PlacementDecisionList"))
		return cli.PrintData(o.Out, o.Output, list)
	}
	table := DecisionsTable(list.Items)
	if len(table.Rows) == 0 {
		fmt.Fprintf(o.ErrOut, "Placement %s/%s has no decisions: `kubectl ocm placement explain %s -n %s` tells why.\n", o.Namespace, o.Name, o.Name, o.Namespace)
		return nil
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(table, o.Out)
}

// DecisionsTable renders the decisions as a kubectl table: CLUSTER, GROUP
// INDEX, GROUP NAME, SCORE, DECISION (the PlacementDecision holding it).
// Empty decisions (not scheduled) are left out.
func DecisionsTable(items []clusterv1beta1.PlacementDecision) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string"}, {Name: "Group Index", Type: "string"}, {Name: "Group Name", Type: "string"},
		{Name: "Score", Type: "integer"}, {Name: "Decision", Type: "string"},
	}}
	for i := range items {
		pd := &items[i]
		for _, d := range pd.Status.Decisions {
			if d.ClusterName == "" {
				continue
			}
			table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
				d.ClusterName, pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], pd.Labels[clusterv1beta1.DecisionGroupNameLabel], d.Score, pd.Name,
			}})
		}
	}
	return table
}

// DeleteOptions are the options of `kubectl ocm placement delete`.
type DeleteOptions struct {
	NamedOptions
	// DryRun is none, client (say what would be deleted) or server (have
	// the hub admit the deletion too), deleting nothing.
	DryRun string
}

// Validate checks the name and --dry-run.
func (o *DeleteOptions) Validate() error {
	return errors.Join(o.NamedOptions.Validate(), cli.ValidateDryRunMode(o.DryRun))
}

// Run deletes the Placement, warning about ManifestWorkReplicaSets that use it.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	c = cli.DryRunWriter(c, o.DryRun)
	p := &clusterv1beta1.Placement{}
	p.Namespace, p.Name = o.Namespace, o.Name
	if err := c.Delete(ctx, p); err != nil {
		if apierrors.IsNotFound(err) {
			if o.IgnoreNotFound {
				return nil
			}
			return fmt.Errorf("placement %s not found in namespace %s: list them with `kubectl ocm placement get -A`", o.Name, o.Namespace)
		}
		return fmt.Errorf("delete Placement %s/%s on %s: %w", o.Namespace, o.Name, cfg.Host, err)
	}
	fmt.Fprintf(o.Out, "Placement %s deleted in namespace %s%s\n", o.Name, o.Namespace, cli.DryRunSuffix(o.DryRun))
	sets := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := c.List(ctx, sets, client.InNamespace(o.Namespace)); err == nil {
		for _, s := range sets.Items {
			for _, ref := range s.Spec.PlacementRefs {
				if ref.Name == o.Name {
					fmt.Fprintf(o.ErrOut, "Warning: ManifestWorkReplicaSet %s still refers to the placement and keeps its works until the placement comes back or it is deleted\n", s.Name)
				}
			}
		}
	}
	return nil
}

// decisionsOf lists the PlacementDecisions of Placement ns/name, sorted by
// group index and name.
func decisionsOf(ctx context.Context, c client.Client, ns, name string) (*clusterv1beta1.PlacementDecisionList, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ns, name, err)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1beta1.PlacementDecision) int {
		ai, _ := strconv.Atoi(a.Labels[clusterv1beta1.DecisionGroupIndexLabel])
		bi, _ := strconv.Atoi(b.Labels[clusterv1beta1.DecisionGroupIndexLabel])
		if ai != bi {
			return ai - bi
		}
		return strings.Compare(a.Name, b.Name)
	})
	return list, nil
}
