package hub

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubclean"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run removes the hub: the ManagedClusters (with --force), then the
// ClusterManager, whose operator removes what it installed, then the
// operator itself.
func (o *CleanOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	c = cli.DryRunWriter(c, o.DryRun)
	if err := o.removeClusters(ctx, c); err != nil {
		return err
	}
	removed := 0
	report := func(obj client.Object) {
		fmt.Fprintf(o.Out, "Removed %s%s\n", apply.Describe(obj), cli.DryRunSuffix(o.DryRun))
		removed++
	}
	own, err := config.HubOperatorObjects(config.HubOperatorValues{})
	if err != nil {
		return fmt.Errorf("render hub manifests: %w", err)
	}
	if err := o.removeClusterManager(ctx, c, own, report); err != nil {
		return fmt.Errorf("remove the hub from %s: %w", cfg.Host, err)
	}
	own = slices.DeleteFunc(own, func(u *unstructured.Unstructured) bool { return u.GetKind() == "ClusterManager" })
	if err := hubclean.Remove(ctx, c, own, report); err != nil {
		return fmt.Errorf("remove the ClusterManager operator from %s: %w", cfg.Host, err)
	}
	fmt.Fprintf(o.Out, "Removed %d hub objects from %s%s.\n", removed, cfg.Host, cli.DryRunSuffix(o.DryRun))
	return nil
}

// removeClusters refuses while ManagedClusters exist, unless --force: then it
// deletes them and waits until the hub controller has cleaned up after each.
func (o *CleanOptions) removeClusters(ctx context.Context, c client.Client) error {
	clusters, err := hubclean.Clusters(ctx, c)
	if err != nil || len(clusters) == 0 {
		return err
	}
	if !o.Force {
		return errors.New(hubclean.RefusalMessage(clusters, "rerun with --force"))
	}
	if err := hubclean.DeleteClusters(ctx, c, clusters, func(name string) {
		fmt.Fprintf(o.Out, "Deleted ManagedCluster %s%s\n", name, cli.DryRunSuffix(o.DryRun))
	}); err != nil {
		return err
	}
	if cli.IsDryRun(o.DryRun) {
		return nil
	}
	return cli.Wait(ctx, o.ErrOut, o.Timeout, "the hub controller to clean up deleted ManagedClusters", func(ctx context.Context) (bool, string, error) {
		left, err := hubclean.Clusters(ctx, c)
		if err != nil || len(left) == 0 {
			return err == nil, "", err
		}
		state := fmt.Sprintf("%d left", len(left))
		if cond := meta.FindStatusCondition(left[0].Status.Conditions, clusterv1.ManagedClusterConditionDeleting); cond != nil {
			state += fmt.Sprintf("; %s: %s", left[0].Name, cond.Message)
		}
		return false, state, nil
	})
}

// removeClusterManager deletes the ClusterManager and waits until its
// operator has removed the hub and let it go. When no operator runs (a hub
// installed without it), it removes the hub by the same rule itself.
func (o *CleanOptions) removeClusterManager(ctx context.Context, c client.Client, own []*unstructured.Unstructured, report func(client.Object)) error {
	cm := &operatorv1.ClusterManager{}
	err := c.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm)
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return o.removeHubObjects(ctx, c, own, report)
	} else if err != nil {
		return fmt.Errorf("get ClusterManager %s: %w", operatorv1.ClusterManagerName, err)
	}
	operator := &appsv1.Deployment{}
	err = c.Get(ctx, client.ObjectKey{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment}, operator)
	operatorMissing := apierrors.IsNotFound(err)
	if operatorMissing {
		if err := o.removeHubObjects(ctx, c, own, report); err != nil {
			return err
		}
		if controllerutil.RemoveFinalizer(cm, operatorv1.CleanupFinalizer) {
			if err := c.Update(ctx, cm); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("remove the finalizer of ClusterManager %s: %w", cm.Name, err)
			}
		}
	} else if err != nil {
		return fmt.Errorf("get the ClusterManager operator: %w", err)
	}
	if err := c.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete ClusterManager %s: %w", cm.Name, err)
	}
	cm.SetGroupVersionKind(operatorv1.GroupVersion.WithKind("ClusterManager"))
	report(cm)
	if cli.IsDryRun(o.DryRun) {
		// What the operator would remove, unless it is not there and the
		// hub objects were counted above.
		if operatorMissing {
			return nil
		}
		return o.removeHubObjects(ctx, c, own, report)
	}
	what := fmt.Sprintf("the ClusterManager operator to remove the hub of ClusterManager %s", cm.Name)
	return cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return true, "", nil
		} else if err != nil {
			return false, "", err
		}
		if applied := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied); applied != nil && applied.Status == "False" {
			return false, applied.Reason + ": " + applied.Message, nil
		}
		return false, "removing", nil
	})
}

// removeHubObjects removes what the operator installs, less its own
// install, as the operator does.
func (o *CleanOptions) removeHubObjects(ctx context.Context, c client.Client, own []*unstructured.Unstructured, report func(client.Object)) error {
	objs, err := config.HubObjects(config.HubValues{})
	if err != nil {
		return fmt.Errorf("render hub manifests: %w", err)
	}
	return hubclean.Remove(ctx, c, hubclean.Without(objs, own), report)
}
