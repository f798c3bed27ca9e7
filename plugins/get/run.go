package get

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run lists the clusters.
func (o *ClustersOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	clusters, err := o.list(ctx, c)
	if err != nil {
		return fmt.Errorf("list managed clusters on %s: %w", cfg.Host, err)
	}
	return cli.PrintList(o.IOStreams, o.PrintFlags, clusters, clusters.Items, clusterv1.GroupVersion.WithKind("ManagedCluster"),
		func() (*metav1.Table, error) { return ClustersTable(clusters.Items, time.Now()), nil },
		cli.ListOutput{Empty: "No managed clusters found."})
}

// list reads the clusters selected by names and --clusterset.
func (o *ClustersOptions) list(ctx context.Context, c client.Client) (*clusterv1.ManagedClusterList, error) {
	list := &clusterv1.ManagedClusterList{}
	var opts []client.ListOption
	if o.ClusterSet != "" {
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: o.ClusterSet}, set); err != nil {
			return nil, fmt.Errorf("get ManagedClusterSet %s: %w", o.ClusterSet, err)
		}
		sel, err := set.Spec.ClusterSelector.Selector(set.Name)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	if len(o.Names) > 0 {
		list.Items = slices.DeleteFunc(list.Items, func(mc clusterv1.ManagedCluster) bool { return !slices.Contains(o.Names, mc.Name) })
	}
	return list, nil
}

// ClustersTable renders clusters as a kubectl table: NAME, HUB ACCEPTED,
// MANAGED CLUSTER URLS, JOINED, AVAILABLE, AGE, and the wide-only columns
// (priority 1, which the table printer shows only with -o wide) VERSION, CPU,
// MEMORY, CLUSTERSET and CLAIMS.
func ClustersTable(clusters []clusterv1.ManagedCluster, now time.Time) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Hub Accepted", Type: "boolean"},
		{Name: "Managed Cluster URLs", Type: "string"}, {Name: "Joined", Type: "string"},
		{Name: "Available", Type: "string"}, {Name: "Age", Type: "date"},
		{Name: "Version", Type: "string", Priority: 1}, {Name: "CPU", Type: "string", Priority: 1},
		{Name: "Memory", Type: "string", Priority: 1}, {Name: "ClusterSet", Type: "string", Priority: 1},
		{Name: "Claims", Type: "string", Priority: 1},
	}}
	for i := range clusters {
		mc := &clusters[i]
		var urls []string
		for _, cc := range mc.Spec.ManagedClusterClientConfigs {
			urls = append(urls, cc.URL)
		}
		row := metav1.TableRow{Cells: []any{
			mc.Name, mc.Spec.HubAcceptsClient, strings.Join(urls, ","),
			conditionStatus(mc, clusterv1.ManagedClusterConditionJoined),
			conditionStatus(mc, clusterv1.ManagedClusterConditionAvailable),
			duration.HumanDuration(now.Sub(mc.CreationTimestamp.Time)),
			mc.Status.Version.Kubernetes, quantity(mc, clusterv1.ResourceCPU), quantity(mc, clusterv1.ResourceMemory),
			mc.Labels[clusterv1beta2.ClusterSetLabel], claims(mc),
		}, Object: runtime.RawExtension{Object: mc}}
		table.Rows = append(table.Rows, row)
	}
	return table
}

// conditionStatus returns the status of condition typ, "" when absent.
func conditionStatus(mc *clusterv1.ManagedCluster, typ string) string {
	if c := meta.FindStatusCondition(mc.Status.Conditions, typ); c != nil {
		return string(c.Status)
	}
	return ""
}

// quantity returns the allocatable (else capacity) amount of name.
func quantity(mc *clusterv1.ManagedCluster, name clusterv1.ResourceName) string {
	for _, list := range []clusterv1.ResourceList{mc.Status.Allocatable, mc.Status.Capacity} {
		if q, ok := list[name]; ok {
			return q.String()
		}
	}
	return ""
}

// claims renders the cluster's claims as name=value pairs.
func claims(mc *clusterv1.ManagedCluster) string {
	parts := make([]string, 0, len(mc.Status.ClusterClaims))
	for _, c := range mc.Status.ClusterClaims {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, ",")
}
