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
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run shows the add-on on each cluster it is enabled on and, in the table
// output, the registration of its agents on each cluster (see
// RegistrationTable) and the install progressions of its
// ClusterManagementAddOn.
func (o *GetOptions) Run(ctx context.Context) error {
	h, cmas, err := connectAddons(ctx, o.getter)
	if err != nil {
		return err
	}
	if err := requireAddons(cmas, o.Name); err != nil {
		return err
	}
	if len(o.Clusters) > 0 {
		if err := h.checkClusters(ctx, o.Clusters, false); err != nil {
			return err
		}
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := h.List(ctx, list, client.MatchingFields{"metadata.name": o.Name}); err != nil {
		return fmt.Errorf("list the ManagedClusterAddOns %s of every cluster on %s: %w", o.Name, h.host, err)
	}
	if len(o.Clusters) > 0 {
		list.Items = slices.DeleteFunc(list.Items, func(m addonv1alpha1.ManagedClusterAddOn) bool { return !slices.Contains(o.Clusters, m.Namespace) })
	}
	slices.SortFunc(list.Items, func(a, b addonv1alpha1.ManagedClusterAddOn) int { return strings.Compare(a.Namespace, b.Namespace) })
	err = cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOn"),
		func() (*metav1.Table, error) { return ClustersTable(list.Items, time.Now()), nil },
		cli.ListOutput{Empty: o.notEnabled()})
	if err != nil {
		return err
	}
	format := cli.Output(o.PrintFlags)
	if format != "" && format != "wide" {
		return nil
	}
	if slices.ContainsFunc(list.Items, func(m addonv1alpha1.ManagedClusterAddOn) bool { return len(m.Status.Registrations) > 0 }) {
		csrs, err := h.addonCSRs(ctx, o.Name)
		if err != nil {
			fmt.Fprintf(o.ErrOut, "Warning: %v; the LAST CSR column is unknown\n", err)
		}
		fmt.Fprintf(o.Out, "\nRegistration of %s (hub credentials of its agents):\n", o.Name)
		if err := cli.PrintTable(o.Out, RegistrationTable(list.Items, csrs, time.Now()), format == "wide"); err != nil {
			return err
		}
	}
	cma := cmas[o.Name]
	if len(cma.Status.InstallProgressions) == 0 {
		return nil
	}
	fmt.Fprintf(o.Out, "\nInstall progressions of %s (%s):\n", o.Name, installStrategy(cma))
	return cli.PrintTable(o.Out, ProgressionsTable(cma.Status.InstallProgressions), format == "wide")
}

// notEnabled is the message printed when the add-on is on no cluster asked for.
func (o *GetOptions) notEnabled() string {
	if len(o.Clusters) > 0 {
		return fmt.Sprintf("Add-on %s is not enabled on managed cluster(s) %s.", o.Name, strings.Join(o.Clusters, ","))
	}
	return fmt.Sprintf("Add-on %s is not enabled on any managed cluster: enable it with `kubectl ocm addon enable --names %s --clusters NAME[,NAME...]`.", o.Name, o.Name)
}

// ClustersTable renders the ManagedClusterAddOns of one add-on as a kubectl
// table, one row per cluster: CLUSTER, AVAILABLE, DEGRADED, PROGRESSING
// (with its reason), HEALTH (the health check mode), CONFIGS (each
// configuration desired, with its short spec hash, and whether that is
// applied), AGE; INSTALL NAMESPACE, CONFIGURED and MESSAGE (why it is not
// yet fine) at priority 1, shown with -o wide.
func ClustersTable(mcas []addonv1alpha1.ManagedClusterAddOn, now time.Time) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string"}, {Name: "Available", Type: "string"}, {Name: "Degraded", Type: "string"},
		{Name: "Progressing", Type: "string"}, {Name: "Health", Type: "string"}, {Name: "Configs", Type: "string"},
		{Name: "Age", Type: "date"},
		{Name: "Install Namespace", Type: "string", Priority: 1}, {Name: "Configured", Type: "string", Priority: 1},
		{Name: "Message", Type: "string", Priority: 1},
	}}
	for i := range mcas {
		mca := &mcas[i]
		conds := mca.Status.Conditions
		row := metav1.TableRow{Cells: []any{
			mca.Namespace, statusCell(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable),
			statusCell(conds, addonv1alpha1.ManagedClusterAddOnConditionDegraded),
			reasonCell(conds, addonv1alpha1.ManagedClusterAddOnConditionProgressing), healthMode(mca), mcaConfigs(mca),
			duration.HumanDuration(now.Sub(mca.CreationTimestamp.Time)),
			mca.AgentInstallNamespace(), statusCell(conds, addonv1alpha1.ManagedClusterAddOnConditionConfigured), attention(mca),
		}}
		row.Object = runtime.RawExtension{Object: mca}
		table.Rows = append(table.Rows, row)
	}
	return table
}

// ProgressionsTable renders the install progressions of a
// ClusterManagementAddOn: PLACEMENT, PROGRESSING (with its reason),
// CONFIGS (each configuration desired and whether every cluster applied
// it), MESSAGE.
func ProgressionsTable(progressions []addonv1alpha1.InstallProgression) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Placement", Type: "string"}, {Name: "Progressing", Type: "string"},
		{Name: "Configs", Type: "string"}, {Name: "Message", Type: "string"},
	}}
	for _, p := range progressions {
		configs := make([]string, 0, len(p.ConfigReferences))
		for _, r := range p.ConfigReferences {
			configs = append(configs, configState(r.Resource, addonv1alpha1.ConfigReferent{}, r.DesiredConfig, r.LastAppliedConfig))
		}
		message := ""
		if c := findCondition(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil {
			message = c.Message
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
			p.Namespace + "/" + p.Name, reasonCell(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing),
			strings.Join(configs, ", "), message,
		}})
	}
	return table
}
