package addon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run lists the ClusterManagementAddOns; the table counts their
// ManagedClusterAddOns.
func (o *ListOptions) Run(ctx context.Context) error {
	h, err := connect(ctx, o.getter)
	if err != nil {
		return err
	}
	list := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := h.List(ctx, list); err != nil {
		return fmt.Errorf("list ClusterManagementAddOns on %s: %w", h.host, err)
	}
	slices.SortFunc(list.Items, func(a, b addonv1alpha1.ClusterManagementAddOn) int { return strings.Compare(a.Name, b.Name) })
	return cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, addonv1alpha1.GroupVersion.WithKind("ClusterManagementAddOn"),
		func() (*metav1.Table, error) {
			mcas := &addonv1alpha1.ManagedClusterAddOnList{}
			if err := h.List(ctx, mcas); err != nil {
				return nil, fmt.Errorf("list the ManagedClusterAddOns of every cluster on %s: %w", h.host, err)
			}
			return AddonsTable(list.Items, mcas.Items, time.Now()), nil
		},
		cli.ListOutput{Empty: "No add-ons found: register one with `kubectl ocm addon create NAME -f MANIFESTS`."})
}

// addonCounts are the numbers of clusters an add-on is enabled, available,
// progressing and degraded on.
type addonCounts struct {
	enabled, available, progressing, degraded int64
}

// AddonsTable renders cmas as a kubectl table: NAME, INSTALL STRATEGY
// (Manual, or Placements: NAMESPACE/NAME,...), LIFECYCLE (addon-manager or
// self), then how many of mcas (ManagedClusterAddOns of every cluster) are
// ENABLED, AVAILABLE and PROGRESSING, AGE; DISPLAY NAME, DEGRADED and
// SUPPORTED CONFIGS (with their defaults) at priority 1, shown with -o wide.
func AddonsTable(cmas []addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn, now time.Time) *metav1.Table {
	counts := map[string]*addonCounts{}
	for i := range mcas {
		n := counts[mcas[i].Name]
		if n == nil {
			n = &addonCounts{}
			counts[mcas[i].Name] = n
		}
		conds := mcas[i].Status.Conditions
		n.enabled++
		n.available += isTrue(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		n.progressing += isTrue(conds, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
		n.degraded += isTrue(conds, addonv1alpha1.ManagedClusterAddOnConditionDegraded)
	}
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Install Strategy", Type: "string"}, {Name: "Lifecycle", Type: "string"},
		{Name: "Enabled", Type: "integer"}, {Name: "Available", Type: "integer"}, {Name: "Progressing", Type: "integer"},
		{Name: "Age", Type: "date"},
		{Name: "Display Name", Type: "string", Priority: 1}, {Name: "Degraded", Type: "integer", Priority: 1},
		{Name: "Supported Configs", Type: "string", Priority: 1},
	}}
	for i := range cmas {
		cma := &cmas[i]
		n := counts[cma.Name]
		if n == nil {
			n = &addonCounts{}
		}
		row := metav1.TableRow{Cells: []any{
			cma.Name, installStrategy(cma), lifecycle(cma), n.enabled, n.available, n.progressing,
			duration.HumanDuration(now.Sub(cma.CreationTimestamp.Time)),
			cma.Spec.AddOnMeta.DisplayName, n.degraded, supportedConfigs(cma),
		}}
		row.Object = runtime.RawExtension{Object: cma}
		table.Rows = append(table.Rows, row)
	}
	return table
}

// isTrue is 1 when condition typ is True, else 0.
func isTrue(conds []metav1.Condition, typ string) int64 {
	if c := findCondition(conds, typ); c != nil && c.Status == metav1.ConditionTrue {
		return 1
	}
	return 0
}
