package hub

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run removes the hub.
func (o *CleanOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	if err := o.removeClusters(ctx, c); err != nil {
		return err
	}
	if err := o.removeClusterBootstrapBindings(ctx, c); err != nil {
		return err
	}
	objs, err := config.HubObjects(config.HubValues{})
	if err != nil {
		return fmt.Errorf("render hub manifests: %w", err)
	}
	sorted := apply.Sort(objs)
	slices.Reverse(sorted)
	removed := 0
	for _, obj := range sorted {
		err := c.Delete(ctx, obj.DeepCopy())
		switch {
		case err == nil:
			fmt.Fprintf(o.Out, "Removed %s\n", apply.Describe(obj))
			removed++
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			return fmt.Errorf("remove %s from %s: %w", apply.Describe(obj), cfg.Host, err)
		}
	}
	fmt.Fprintf(o.Out, "Removed %d hub objects from %s.\n", removed, cfg.Host)
	return nil
}

// removeClusters refuses while ManagedClusters exist, unless --force: then it
// deletes them and waits until the hub controller has cleaned up after each.
func (o *CleanOptions) removeClusters(ctx context.Context, c client.Client) error {
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil // CRDs already gone
		}
		return fmt.Errorf("list ManagedClusters: %w", err)
	}
	if len(clusters.Items) == 0 {
		return nil
	}
	names := make([]string, 0, len(clusters.Items))
	for _, mc := range clusters.Items {
		names = append(names, mc.Name)
	}
	if !o.Force {
		return fmt.Errorf("%d managed clusters are still registered (%v): unjoin them (`kubectl ocm unjoin` on each), or rerun with --force to delete them", len(names), names)
	}
	for i := range clusters.Items {
		if err := c.Delete(ctx, &clusters.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ManagedCluster %s: %w", clusters.Items[i].Name, err)
		}
		fmt.Fprintf(o.Out, "Deleted ManagedCluster %s\n", clusters.Items[i].Name)
	}
	return cli.Wait(ctx, o.ErrOut, o.Timeout, "the hub controller to clean up deleted ManagedClusters", func(ctx context.Context) (bool, string, error) {
		left := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, left); err != nil {
			return false, "", err
		}
		if len(left.Items) == 0 {
			return true, "", nil
		}
		state := fmt.Sprintf("%d left", len(left.Items))
		if cond := meta.FindStatusCondition(left.Items[0].Status.Conditions, clusterv1.ManagedClusterConditionDeleting); cond != nil {
			state += fmt.Sprintf("; %s: %s", left.Items[0].Name, cond.Message)
		}
		return false, state, nil
	})
}

// removeClusterBootstrapBindings deletes the ClusterRoleBindings of the
// cluster-bound bootstrap identities (`hub token --cluster-name`); their
// ServiceAccounts go with the bootstrap namespace.
func (o *CleanOptions) removeClusterBootstrapBindings(ctx context.Context, c client.Client) error {
	list := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, list, client.MatchingLabels{config.PartOfLabelKey: config.PartOfLabelValue, config.ComponentLabelKey: config.ClusterBootstrapComponent}); err != nil {
		return fmt.Errorf("list the bindings of cluster-bound bootstrap identities: %w", err)
	}
	for i := range list.Items {
		if err := c.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove ClusterRoleBinding %s: %w", list.Items[i].Name, err)
		}
		fmt.Fprintf(o.Out, "Removed ClusterRoleBinding %s\n", list.Items[i].Name)
	}
	return nil
}
