package clusterset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run creates the set, refusing to change one that exists.
func (o *CreateOptions) Run(ctx context.Context) error {
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: o.Name}}
	if o.selector != nil {
		set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: o.selector}
	} else {
		set.Spec.ClusterSelector.SelectorType = clusterv1beta2.ExclusiveClusterSetLabel
	}
	if o.DryRun == cli.DryRunClient {
		u, err := cli.ToUnstructured(set)
		if err != nil {
			return err
		}
		return o.print(u, "created (dry run)")
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	err = c.Get(ctx, client.ObjectKey{Name: o.Name}, &clusterv1beta2.ManagedClusterSet{})
	switch {
	case err == nil:
		return fmt.Errorf("ManagedClusterSet %s already exists: add clusters with `kubectl ocm clusterset set %s --clusters a,b`", o.Name, o.Name)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
	}
	u, err := cli.Apply(ctx, c, set, o.DryRun == cli.DryRunServer)
	if err != nil {
		return fmt.Errorf("create ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
	}
	verb := "created"
	if o.DryRun == cli.DryRunServer {
		verb = "created (server dry run)"
	}
	return o.print(u, verb)
}

// print writes the set with -o, or a one-line message.
func (o *CreateOptions) print(obj runtime.Object, verb string) error {
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "ManagedClusterSet %s %s\n", o.Name, verb)
		return nil
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, o.Out)
}

// Run deletes the set unless it is bound (without --force), warning about
// its member clusters and the bindings left behind.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			if o.IgnoreNotFound {
				return nil
			}
			return fmt.Errorf("ManagedClusterSet %s not found: list the sets with `kubectl ocm clusterset get`", o.Name)
		}
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
	}
	bound, err := boundNamespaces(ctx, c)
	if err != nil {
		return err
	}
	if ns := bound[o.Name]; len(ns) > 0 && !o.Force {
		return fmt.Errorf("ManagedClusterSet %s is bound to namespace(s) %s: placements there use it; unbind it first (`kubectl ocm clusterset unbind %s -n %s`) or add --force",
			o.Name, strings.Join(ns, ","), o.Name, ns[0])
	}
	members, err := memberClusters(ctx, c, set)
	if err != nil {
		return err
	}
	if err := c.Delete(ctx, set); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
	}
	fmt.Fprintf(o.Out, "ManagedClusterSet %s deleted\n", o.Name)
	if len(members) > 0 {
		fmt.Fprintf(o.ErrOut, "Warning: ManagedClusterSet %s had %d member cluster(s) (%s); they keep their %s label and belong to no set until moved with `kubectl ocm clusterset set OTHER --clusters ...`\n",
			o.Name, len(members), strings.Join(members, ","), clusterv1beta2.ClusterSetLabel)
	}
	if ns := bound[o.Name]; len(ns) > 0 {
		fmt.Fprintf(o.ErrOut, "Warning: the bindings in namespace(s) %s remain and report Bound=False; remove them with `kubectl ocm clusterset unbind %s -n NAMESPACE`\n",
			strings.Join(ns, ","), o.Name)
	}
	return nil
}

// Run lists the sets, or shows one.
func (o *GetOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	list := &clusterv1beta2.ManagedClusterSetList{}
	notFound := fmt.Errorf("ManagedClusterSet %s not found: list the sets with `kubectl ocm clusterset get`", o.Name)
	if err := cli.GetOrList(ctx, c, list, &list.Items, "", o.Name, cli.Lookup{Kind: "ManagedClusterSet", Host: cfg.Host, NotFound: notFound}); err != nil {
		return err
	}
	return cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet"),
		func() (*metav1.Table, error) {
			bound, err := boundNamespaces(ctx, c)
			if err != nil {
				return nil, err
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.List(ctx, clusters); err != nil {
				return nil, fmt.Errorf("list ManagedClusters on %s: %w", cfg.Host, err)
			}
			return SetsTable(list.Items, bound, clusters.Items, time.Now()), nil
		},
		cli.ListOutput{Empty: "No cluster sets found.", Named: o.Name != ""})
}

// SetsTable renders sets as a kubectl table: NAME, BOUND NAMESPACES,
// CLUSTERS (member count), SELECTOR TYPE, MANAGED NAMESPACES (those the
// agents create on every member cluster), AGE, then EMPTY (the
// ClusterSetEmpty condition) at priority 1, which the table printer shows
// only with -o wide. bound maps a set to the namespaces it is bound to.
func SetsTable(sets []clusterv1beta2.ManagedClusterSet, bound map[string][]string, clusters []clusterv1.ManagedCluster, now time.Time) *metav1.Table {
	cols := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Bound Namespaces", Type: "string"}, {Name: "Clusters", Type: "integer"},
		{Name: "Selector Type", Type: "string"}, {Name: "Managed Namespaces", Type: "string"}, {Name: "Age", Type: "date"},
		{Name: "Empty", Type: "string", Priority: 1},
	}
	table := &metav1.Table{ColumnDefinitions: cols}
	for i := range sets {
		s := &sets[i]
		count := int64(0)
		if sel, err := s.Spec.ClusterSelector.Selector(s.Name); err == nil {
			for j := range clusters {
				if clusters[j].DeletionTimestamp == nil && sel.Matches(labels.Set(clusters[j].Labels)) {
					count++
				}
			}
		}
		empty := ""
		if c := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty); c != nil {
			empty = string(c.Status)
		}
		row := metav1.TableRow{Cells: []any{
			s.Name, strings.Join(bound[s.Name], ","), count, selectorType(s), strings.Join(namespaceNames(s), ","),
			duration.HumanDuration(now.Sub(s.CreationTimestamp.Time)), empty,
		}}
		row.Object = runtime.RawExtension{Object: s}
		table.Rows = append(table.Rows, row)
	}
	return table
}

// selectorType is the set's selector type, ExclusiveClusterSetLabel when unset.
func selectorType(s *clusterv1beta2.ManagedClusterSet) string {
	switch t := s.Spec.ClusterSelector.SelectorType; t {
	case "", clusterv1beta2.LegacyClusterSetLabel:
		return string(clusterv1beta2.ExclusiveClusterSetLabel)
	default:
		return string(t)
	}
}

// memberClusters returns the sorted names of the clusters set holds.
func memberClusters(ctx context.Context, c client.Client, set *clusterv1beta2.ManagedClusterSet) ([]string, error) {
	sel, err := set.Spec.ClusterSelector.Selector(set.Name)
	if err != nil {
		return nil, err
	}
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list the clusters of ManagedClusterSet %s: %w", set.Name, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, mc := range list.Items {
		names = append(names, mc.Name)
	}
	slices.Sort(names)
	return names, nil
}

// boundNamespaces maps each set to the sorted namespaces with a binding of it.
func boundNamespaces(ctx context.Context, c client.Client) (map[string][]string, error) {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ManagedClusterSetBindings: %w", err)
	}
	out := map[string][]string{}
	for _, b := range list.Items {
		out[b.Spec.ClusterSet] = append(out[b.Spec.ClusterSet], b.Namespace)
	}
	for _, ns := range out {
		slices.Sort(ns)
	}
	return out, nil
}
