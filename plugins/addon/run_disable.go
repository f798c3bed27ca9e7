package addon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// target is one ManagedClusterAddOn to delete.
type target struct {
	// name is the add-on, cluster the cluster (the namespace).
	name, cluster string
}

// Run finds the ManagedClusterAddOns to delete, failing before any is
// deleted when an add-on or a cluster is unknown or an add-on is not
// enabled on a named cluster, deletes them and, with --wait, waits until
// they are gone.
func (o *DisableOptions) Run(ctx context.Context) error {
	h, cmas, err := connectAddons(ctx, o.getter)
	if err != nil {
		return err
	}
	targets, err := o.targets(ctx, h, cmas)
	if err != nil {
		return err
	}
	suffix := map[string]string{cli.DryRunClient: " (dry run)", cli.DryRunServer: " (server dry run)"}[o.DryRun]
	var deleted []target
	for _, t := range targets {
		if o.DryRun != cli.DryRunClient {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			mca.Namespace, mca.Name = t.cluster, t.name
			var opts []client.DeleteOption
			if o.DryRun == cli.DryRunServer {
				opts = append(opts, client.DryRunAll)
			}
			if err := h.Delete(ctx, mca, opts...); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("disable add-on %s on managed cluster %s (delete ManagedClusterAddOn %s/%s on %s): %w", t.name, t.cluster, t.cluster, t.name, h.host, err)
			}
		}
		fmt.Fprintf(o.Out, "Undeploying %s add-on in managed cluster: %s%s.\n", t.name, t.cluster, suffix)
		deleted = append(deleted, t)
	}
	if o.AllClusters && len(targets) == 0 {
		fmt.Fprintf(o.Out, "Add-on %s is not enabled on any managed cluster.\n", strings.Join(o.Names, ","))
	}
	if !o.Wait || len(deleted) == 0 {
		return nil
	}
	return o.waitGone(ctx, h, deleted)
}

// targets returns the ManagedClusterAddOns to delete: those of the add-ons
// on the named clusters, or with --all-clusters on every cluster. An add-on
// without a ClusterManagementAddOn is unknown unless a ManagedClusterAddOn
// of it is found; an add-on not enabled on a named cluster is an error
// unless --ignore-not-found. cmas are the hub's ClusterManagementAddOns.
func (o *DisableOptions) targets(ctx context.Context, h hub, cmas map[string]*addonv1alpha1.ClusterManagementAddOn) ([]target, error) {
	if !o.AllClusters {
		if err := h.checkClusters(ctx, o.Clusters, false); err != nil {
			return nil, err
		}
	}
	var targets []target
	var errs []error
	for _, name := range o.Names {
		found, missing, err := o.find(ctx, h, name)
		if err != nil {
			return nil, err
		}
		switch {
		case len(found) == 0 && cmas[name] == nil:
			errs = append(errs, unknownAddon(name, cmas))
			continue
		case len(missing) > 0 && !o.IgnoreNotFound:
			errs = append(errs, fmt.Errorf("add-on %s is not enabled on managed cluster(s) %s (no ManagedClusterAddOn %s in their namespaces): see where it is with `kubectl ocm addon get %s`, or add --ignore-not-found",
				name, strings.Join(missing, ","), name, name))
		}
		for _, cluster := range found {
			targets = append(targets, target{name: name, cluster: cluster})
		}
	}
	return targets, errors.Join(errs...)
}

// find returns the clusters that have a ManagedClusterAddOn name and,
// without --all-clusters, the named clusters that do not.
func (o *DisableOptions) find(ctx context.Context, h hub, name string) (found, missing []string, err error) {
	if o.AllClusters {
		list := &addonv1alpha1.ManagedClusterAddOnList{}
		if err := h.List(ctx, list, client.MatchingFields{"metadata.name": name}); err != nil {
			return nil, nil, fmt.Errorf("list the ManagedClusterAddOns %s of every cluster on %s: %w; to disable it on some clusters, use --clusters NAME[,NAME...]", name, h.host, err)
		}
		for _, mca := range list.Items {
			found = append(found, mca.Namespace)
		}
		slices.Sort(found)
		return found, nil, nil
	}
	for _, cluster := range o.Clusters {
		err := h.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &addonv1alpha1.ManagedClusterAddOn{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, cluster)
		case err != nil:
			return nil, nil, fmt.Errorf("read ManagedClusterAddOn %s/%s on %s: %w", cluster, name, h.host, err)
		default:
			found = append(found, cluster)
		}
	}
	return found, missing, nil
}

// waitGone waits until the deleted ManagedClusterAddOns are gone, showing
// what holds each one: the add-on manager's pre-delete hook or another
// finalizer.
func (o *DisableOptions) waitGone(ctx context.Context, h hub, deleted []target) error {
	what := fmt.Sprintf("add-on %s to be removed from managed cluster(s) %s", strings.Join(o.Names, ","), clustersOf(deleted))
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		var states []string
		for _, t := range deleted {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			err := h.Get(ctx, client.ObjectKey{Namespace: t.cluster, Name: t.name}, mca)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return false, "", fmt.Errorf("read ManagedClusterAddOn %s/%s: %w", t.cluster, t.name, err)
			}
			state := t.cluster + ": " + removalState(mca)
			if len(o.Names) > 1 {
				state = t.name + " on " + state
			}
			states = append(states, state)
		}
		return len(states) == 0, strings.Join(states, "; "), nil
	})
	if err != nil {
		return fmt.Errorf("%w; the hub's add-on manager runs the add-on's pre-delete hook on the managed cluster before it lets the ManagedClusterAddOn go: see the hook with `kubectl ocm work status addon-%s-pre-delete --clusters CLUSTER`", err, o.Names[0])
	}
	return nil
}

// removalState says what holds mca, which is being deleted.
func removalState(mca *addonv1alpha1.ManagedClusterAddOn) string {
	if len(mca.Finalizers) == 0 {
		return "being deleted"
	}
	if slices.Contains(mca.Finalizers, addonv1alpha1.AddonPreDeleteHookFinalizer) {
		state := "waiting for the pre-delete hook (finalizer " + addonv1alpha1.AddonPreDeleteHookFinalizer
		if c := findCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHookManifestCompleted); c != nil {
			state += ", " + c.Type + " " + conditionText(c)
		}
		return state + ")"
	}
	return "held by finalizer(s) " + strings.Join(mca.Finalizers, ",")
}

// clustersOf lists the clusters of targets once each, comma separated.
func clustersOf(targets []target) string {
	var clusters []string
	for _, t := range targets {
		if !slices.Contains(clusters, t.cluster) {
			clusters = append(clusters, t.cluster)
		}
	}
	return strings.Join(clusters, ",")
}
