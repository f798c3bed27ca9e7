// Package lookup holds what the add-on manager's reconcilers read from the
// manager's cache alike: the indexes of ClusterManagementAddOns and
// ManagedClusterAddOns, the ManagedClusterAddOns of an add-on, the add-ons
// that use a Placement or a configuration, and the decisions of a Placement.
package lookup

import (
	"context"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

// The cache indexes.
const (
	// mcaNameIndex indexes ManagedClusterAddOns by name (the add-on's name).
	mcaNameIndex = "addon.metadata.name"
	// placementIndex indexes ClusterManagementAddOns by the install strategy
	// placements they reference, as <namespace>/<name>.
	placementIndex = "addon.spec.installStrategy.placements"
	// configIndex indexes ClusterManagementAddOns (defaults and placement
	// configs) and ManagedClusterAddOns (spec.configs) by the configurations
	// they reference: each configuration's key (config.Key.String) and kind
	// (<resource>.<group>, the name of its CRD).
	configIndex = "addon.configs"
)

// registered remembers the field indexers the indexes were added to, so
// that every reconciler can call Register and the first one adds them.
var registered = struct {
	sync.Mutex
	done map[client.FieldIndexer]error
}{done: map[client.FieldIndexer]error{}}

// Register adds the indexes to mgr's cache, once per manager.
func Register(ctx context.Context, mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	registered.Lock()
	defer registered.Unlock()
	if err, ok := registered.done[indexer]; ok {
		return err
	}
	err := addIndexes(ctx, indexer)
	registered.done[indexer] = err
	return err
}

// addIndexes adds the three indexes.
func addIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &addonv1alpha1.ManagedClusterAddOn{}, mcaNameIndex, func(o client.Object) []string {
		return []string{o.GetName()}
	}); err != nil {
		return fmt.Errorf("index ManagedClusterAddOns by name: %w", err)
	}
	if err := indexer.IndexField(ctx, &addonv1alpha1.ClusterManagementAddOn{}, placementIndex, func(o client.Object) []string {
		var keys []string
		for _, p := range o.(*addonv1alpha1.ClusterManagementAddOn).Spec.InstallStrategy.Placements {
			keys = append(keys, p.Namespace+"/"+p.Name)
		}
		return keys
	}); err != nil {
		return fmt.Errorf("index ClusterManagementAddOns by placement: %w", err)
	}
	if err := indexer.IndexField(ctx, &addonv1alpha1.ClusterManagementAddOn{}, configIndex, func(o client.Object) []string {
		cma := o.(*addonv1alpha1.ClusterManagementAddOn)
		var refs []addonv1alpha1.AddOnConfig
		for _, sc := range cma.Spec.SupportedConfigs {
			if sc.DefaultConfig != nil {
				refs = append(refs, addonv1alpha1.AddOnConfig{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig})
			}
		}
		for _, p := range cma.Spec.InstallStrategy.Placements {
			refs = append(refs, p.Configs...)
		}
		return configKeys(refs)
	}); err != nil {
		return fmt.Errorf("index ClusterManagementAddOns by configuration: %w", err)
	}
	if err := indexer.IndexField(ctx, &addonv1alpha1.ManagedClusterAddOn{}, configIndex, func(o client.Object) []string {
		return configKeys(o.(*addonv1alpha1.ManagedClusterAddOn).Spec.Configs)
	}); err != nil {
		return fmt.Errorf("index ManagedClusterAddOns by configuration: %w", err)
	}
	return nil
}

// configKeys returns the index values of refs: each key and each kind, once.
func configKeys(refs []addonv1alpha1.AddOnConfig) []string {
	seen := map[string]bool{}
	var out []string
	for _, ref := range refs {
		for _, v := range []string{addonconfig.KeyOf(ref).String(), KindName(ref.ConfigGroupResource)} {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// KindName spells a configuration kind as <resource>.<group> (<resource>
// for the core group): the name of the CRD that serves it.
func KindName(gr addonv1alpha1.ConfigGroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// Managed reports whether the ClusterManagementAddOn of the add-on addon
// exists and leaves the add-on's lifecycle to the hub's add-on manager.
func Managed(ctx context.Context, c client.Reader, addon string) (bool, error) {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Name: addon}, cma); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return addonv1alpha1.ManagedByAddonManager(cma.Annotations), nil
}

// MCAsOf returns the ManagedClusterAddOns named name, in every cluster
// namespace, sorted by namespace.
func MCAsOf(ctx context.Context, c client.Reader, name string) ([]addonv1alpha1.ManagedClusterAddOn, error) {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.List(ctx, list, client.MatchingFields{mcaNameIndex: name}); err != nil {
		return nil, fmt.Errorf("list the ManagedClusterAddOns of %s: %w", name, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Namespace < list.Items[j].Namespace })
	return list.Items, nil
}

// UsingPlacement returns the requests of the ClusterManagementAddOns whose
// install strategy references the Placement namespace/name.
func UsingPlacement(ctx context.Context, c client.Reader, namespace, name string) []reconcile.Request {
	list := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := c.List(ctx, list, client.MatchingFields{placementIndex: namespace + "/" + name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ClusterManagementAddOns by placement", "placement", namespace+"/"+name)
		return nil
	}
	return requests(list.Items)
}

// UsingConfig returns the requests of the ClusterManagementAddOns of the
// add-ons that reference value (a configuration key or kind, see
// configIndex): in their own spec or in one of their ManagedClusterAddOns.
func UsingConfig(ctx context.Context, c client.Reader, value string) []reconcile.Request {
	cmas := &addonv1alpha1.ClusterManagementAddOnList{}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.List(ctx, cmas, client.MatchingFields{configIndex: value}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ClusterManagementAddOns by configuration", "configuration", value)
		return nil
	}
	if err := c.List(ctx, mcas, client.MatchingFields{configIndex: value}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns by configuration", "configuration", value)
		return nil
	}
	out := requests(cmas.Items)
	for i := range mcas.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: mcas.Items[i].Name}})
	}
	return out
}

// requests returns the reconcile requests of cmas.
func requests(cmas []addonv1alpha1.ClusterManagementAddOn) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(cmas))
	for i := range cmas {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: cmas[i].Name}})
	}
	return out
}

// Decisions is what an install strategy placement decided.
type Decisions struct {
	// Found is false when the Placement does not exist.
	Found bool
	// Groups are its decision groups, in index order.
	Groups []rollout.Group
}

// Clusters returns every decided cluster.
func (d Decisions) Clusters() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Clusters...)
	}
	return out
}

// ReadDecisions reads the Placement ref and groups the clusters of its
// PlacementDecisions (labeled cluster.open-cluster-management.io/placement).
func ReadDecisions(ctx context.Context, c client.Reader, ref addonv1alpha1.PlacementRef) (Decisions, error) {
	err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{})
	if apierrors.IsNotFound(err) {
		return Decisions{}, nil
	} else if err != nil {
		return Decisions{}, fmt.Errorf("get Placement %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	list := &clusterv1beta1.PlacementDecisionList{}
	byPlacement := client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name}
	if err := c.List(ctx, list, client.InNamespace(ref.Namespace), byPlacement); err != nil {
		return Decisions{}, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return Decisions{Found: true, Groups: rollout.DecisionGroups(list.Items)}, nil
}
