package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// updateAppliedResources removes the objects of manifests that left the
// work and returns record, which writes the applied objects to the
// AppliedManifestWork's status (nil when it holds them already). pending is
// true while some removed objects are still being deleted; denied is true
// when the work's executor may not delete some of them (they stay recorded
// and are tried again later).
func (r *workReconciler) updateAppliedResources(ctx context.Context, work *workv1.ManifestWork, amw *workv1.AppliedManifestWork, results []apply.Result) (pending, denied bool, record func(context.Context) error, err error) {
	log := ctrl.LoggerFrom(ctx)
	next, stale := plannedResources(amw.Status.AppliedResources, results)
	var errs []error
	for _, res := range stale {
		if err := r.executor.checkDelete(ctx, work, res); err != nil {
			if isExecutorDenied(err) {
				log.Info("Not removing an object the ManifestWork no longer lists: its executor may not delete it", "resource", res.String(), "reason", err.Error())
				denied = true
			} else {
				errs = append(errs, err)
			}
			next = append(next, res)
			continue
		}
		gone, err := r.applier.Remove(ctx, res, amw.UID)
		if err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", res.ResourceIdentifier, err))
		}
		if !gone {
			// Keep the entry until the object is gone.
			next = append(next, res)
			pending = true
			continue
		}
		log.V(2).Info("Removed an object that is no longer maintained by the ManifestWork", "resource", res.String())
	}
	sortResources(next)
	if !equality.Semantic.DeepEqual(next, amw.Status.AppliedResources) {
		record = func(ctx context.Context) error {
			h := patch.NewHelper(amw, r.spoke)
			amw.Status.AppliedResources = next
			if err := h.Patch(ctx, amw); err != nil {
				return fmt.Errorf("record applied resources in AppliedManifestWork %s: %w", amw.Name, err)
			}
			return nil
		}
	}
	return pending, denied, record, errors.Join(errs...)
}

// plannedResources computes the AppliedManifestWork's next applied
// resources from the previous ones and this round's results, and the
// previous ones that left the work (stale). An object applied now is
// recorded with its UID; one whose manifest failed keeps its previous entry;
// a ReadOnly one is never recorded, so it is never deleted. A previous entry
// is stale only when no manifest of the work names it any more: a manifest
// whose kind cannot be mapped at the moment still protects entries with its
// group, namespace and name.
func plannedResources(prev []workv1.AppliedManifestResourceMeta, results []apply.Result) (next, stale []workv1.AppliedManifestResourceMeta) {
	type loose struct{ group, namespace, name string }
	wanted := map[workv1.ResourceIdentifier]bool{}
	unmapped := map[loose]bool{}
	applied := map[workv1.ResourceIdentifier]workv1.AppliedManifestResourceMeta{}
	for i := range results {
		res := &results[i]
		if res.GVR.Resource == "" {
			unmapped[loose{res.Meta.Group, res.Meta.Namespace, res.Meta.Name}] = true
			continue
		}
		meta := res.Resource()
		wanted[meta.ResourceIdentifier] = true
		if res.Err == nil && res.Object != nil && res.Strategy != workv1.UpdateStrategyTypeReadOnly {
			applied[meta.ResourceIdentifier] = meta
		}
	}
	seen := map[workv1.ResourceIdentifier]bool{}
	for id, meta := range applied {
		next = append(next, meta)
		seen[id] = true
	}
	for _, p := range prev {
		switch {
		case seen[p.ResourceIdentifier]:
		case wanted[p.ResourceIdentifier] || unmapped[loose{p.Group, p.Namespace, p.Name}]:
			next = append(next, p)
			seen[p.ResourceIdentifier] = true
		default:
			stale = append(stale, p)
		}
	}
	sortResources(next)
	return next, stale
}

// sortResources orders applied resources by group, resource, namespace, name.
func sortResources(rs []workv1.AppliedManifestResourceMeta) {
	slices.SortFunc(rs, func(a, b workv1.AppliedManifestResourceMeta) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
