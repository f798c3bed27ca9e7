package work

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run deletes the work from every cluster and, with --wait, waits until
// every one is gone; with --replicaset it deletes the ManifestWorkReplicaSet.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	c = cli.DryRunWriter(c, o.DryRun)
	if o.ReplicaSet {
		return o.deleteReplicaSet(ctx, c)
	}
	var errs []error
	var deleted []string
	for _, cluster := range o.Clusters {
		work := &workv1.ManifestWork{}
		work.Namespace, work.Name = cluster, o.Name
		err := c.Delete(ctx, work)
		switch {
		case apierrors.IsNotFound(err) && o.IgnoreNotFound:
		case apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("ManifestWork %s not found in cluster %s: list the works with `kubectl ocm work get --clusters %s`, or add --ignore-not-found", o.Name, cluster, cluster))
		case err != nil:
			errs = append(errs, fmt.Errorf("delete ManifestWork %s in cluster %s on %s: %w", o.Name, cluster, cfg.Host, err))
		default:
			fmt.Fprintf(o.Out, "ManifestWork %s deleted in cluster %s%s\n", o.Name, cluster, cli.DryRunSuffix(o.DryRun))
			deleted = append(deleted, cluster)
		}
	}
	if o.Wait && len(deleted) > 0 {
		what := fmt.Sprintf("ManifestWork %s to be removed from cluster(s) %s", o.Name, strings.Join(deleted, ","))
		if err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, o.gone(c, deleted)); err != nil {
			errs = append(errs, fmt.Errorf("%w; the work agent of each cluster removes the applied objects and then the work: check it runs (`kubectl ocm get clusters` shows the cluster Available)", err))
		}
	}
	return errors.Join(errs...)
}

// gone checks whether the works of clusters are gone; its state names, per
// cluster still waited for, the agent's Deleting message or what holds the work.
func (o *DeleteOptions) gone(c client.Client, clusters []string) cli.Check {
	return func(ctx context.Context) (bool, string, error) {
		var states []string
		for _, cluster := range clusters {
			work := &workv1.ManifestWork{}
			err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, work)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return false, "", fmt.Errorf("read ManifestWork %s in cluster %s: %w", o.Name, cluster, err)
			}
			states = append(states, cluster+": "+deletionState(work))
		}
		return len(states) == 0, strings.Join(states, "; "), nil
	}
}

// deletionState describes where the deletion of work stands.
func deletionState(work *workv1.ManifestWork) string {
	if c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkDeleting); c != nil {
		if c.Message != "" {
			return c.Message
		}
		return "Deleting " + string(c.Status) + " (" + c.Reason + ")"
	}
	if len(work.Finalizers) > 0 {
		return "waiting for the work agent to start removing the applied objects (finalizers " + strings.Join(work.Finalizers, ",") + ")"
	}
	return "being deleted"
}

// deleteReplicaSet deletes ManifestWorkReplicaSet NAME and, with --wait,
// waits until it and its works are gone.
func (o *DeleteOptions) deleteReplicaSet(ctx context.Context, c client.Client) error {
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	mwrs.Namespace, mwrs.Name = o.Namespace, o.Name
	if err := c.Delete(ctx, mwrs); err != nil {
		if apierrors.IsNotFound(err) {
			if o.IgnoreNotFound {
				return nil
			}
			return fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -A`, or add --ignore-not-found", o.Name, o.Namespace)
		}
		return fmt.Errorf("delete ManifestWorkReplicaSet %s/%s: %w", o.Namespace, o.Name, err)
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s deleted in namespace %s%s\n", o.Name, o.Namespace, cli.DryRunSuffix(o.DryRun))
	if !o.Wait {
		return nil
	}
	label := client.MatchingLabels(workv1alpha1.OwnerLabels(o.Namespace, o.Name))
	what := fmt.Sprintf("ManifestWorkReplicaSet %s/%s and its works to be removed", o.Namespace, o.Name)
	return cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		getErr := c.Get(ctx, client.ObjectKeyFromObject(mwrs), &workv1alpha1.ManifestWorkReplicaSet{})
		if getErr != nil && !apierrors.IsNotFound(getErr) {
			return false, "", getErr
		}
		works := &workv1.ManifestWorkList{}
		if err := c.List(ctx, works, label); err != nil {
			return false, "", err
		}
		works.Items = slices.DeleteFunc(works.Items, func(w workv1.ManifestWork) bool { return !workv1alpha1.Owns(o.Namespace, o.Name, &w) })
		state := fmt.Sprintf("%d work(s) left", len(works.Items))
		if getErr == nil {
			state += ", the ManifestWorkReplicaSet is being deleted"
		}
		return getErr != nil && len(works.Items) == 0, state, nil
	})
}
