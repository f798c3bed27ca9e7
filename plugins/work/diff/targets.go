package diff

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workset"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// diffTarget is one cluster to compare on: its current work and the spec
// the new manifests give it; before and after are the manifests of each,
// those of its chunks for a large payload.
type diffTarget struct {
	cluster       string
	current       *workv1.ManifestWork
	spec          workv1.ManifestWorkSpec
	before, after []workv1.Manifest
	probe         *workv1.ManifestWork
}

// workManifests returns the manifests of w: those of its payload's chunks
// when it is a large payload.
func workManifests(ctx context.Context, c client.Reader, w *workv1.ManifestWork) ([]workv1.Manifest, error) {
	m, err := workpayload.Manifests(ctx, c, w.Namespace, &w.Spec)
	if err != nil {
		return nil, fmt.Errorf("ManifestWork %s in cluster %s: %w", w.Name, w.Namespace, err)
	}
	return m, nil
}

// sent is what the new manifests are in a work's spec: themselves, or the
// ManifestPayload of their chunks when they are over the limit of one
// ManifestWork.
func (o *Options) sent(manifests []workv1.Manifest) []workv1.Manifest {
	if o.payload != nil {
		return []workv1.Manifest{o.payload.Manifest}
	}
	return manifests
}

// workTargets reads ManifestWork NAME on each cluster (every cluster that
// has it without --clusters): each must have applied its current
// generation, which the new manifests are compared with.
func (o *Options) workTargets(ctx context.Context, c client.Client, manifests []workv1.Manifest) ([]*diffTarget, error) {
	var works []workv1.ManifestWork
	if len(o.Clusters) == 0 {
		list := &workv1.ManifestWorkList{}
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list ManifestWorks: %w", err)
		}
		for _, w := range list.Items {
			if w.Name == o.Name {
				works = append(works, w)
			}
		}
		if len(works) == 0 {
			return nil, fmt.Errorf("no cluster has ManifestWork %s: a diff compares new manifests with a work that applied; list the works with `kubectl ocm work get`", o.Name)
		}
	}
	for _, cluster := range o.Clusters {
		w := workv1.ManifestWork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, &w); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("ManifestWork %s not found in cluster %s: a diff compares new manifests with a work that applied; list the works with `kubectl ocm work get --clusters %s`", o.Name, cluster, cluster)
			}
			return nil, fmt.Errorf("read ManifestWork %s in cluster %s: %w", o.Name, cluster, err)
		}
		works = append(works, w)
	}
	targets := make([]*diffTarget, 0, len(works))
	for i := range works {
		w := &works[i]
		if err := applied(w); err != nil {
			return nil, err
		}
		before, err := workManifests(ctx, c, w)
		if err != nil {
			return nil, err
		}
		spec := *w.Spec.DeepCopy()
		spec.Workload.Manifests = o.sent(manifests)
		targets = append(targets, &diffTarget{cluster: w.Namespace, current: w, spec: spec, before: before, after: manifests})
	}
	return targets, nil
}

// setTargets reads ManifestWorkReplicaSet NAME and its works: each cluster's
// new spec is the set's template with the new manifests and the overrides
// that choose the cluster.
func (o *Options) setTargets(ctx context.Context, c client.Client, manifests []workv1.Manifest) ([]*diffTarget, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -n %s`", o.Name, o.Namespace, o.Namespace)
		}
		return nil, fmt.Errorf("read ManifestWorkReplicaSet %s/%s: %w", o.Namespace, o.Name, err)
	}
	spec := set.Spec.DeepCopy()
	spec.ManifestWorkTemplate.Workload.Manifests = o.sent(manifests)
	ov, err := workset.NewOverrider(spec)
	if err != nil {
		return nil, fmt.Errorf("the overrides of ManifestWorkReplicaSet %s/%s do not fit the new manifests: %w", o.Namespace, o.Name, err)
	}
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels(workv1alpha1.OwnerLabels(o.Namespace, o.Name))); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", o.Namespace, o.Name, err)
	}
	works.Items = slices.DeleteFunc(works.Items, func(w workv1.ManifestWork) bool { return !workv1alpha1.Owns(o.Namespace, o.Name, &w) })
	if len(works.Items) == 0 {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s has no ManifestWork yet: a diff compares new manifests with works that applied; see `kubectl ocm work rollout status %s -n %s`", o.Namespace, o.Name, o.Name, o.Namespace)
	}
	targets := make([]*diffTarget, 0, len(works.Items))
	for i := range works.Items {
		w := &works.Items[i]
		if err := applied(w); err != nil {
			return nil, err
		}
		before, err := workManifests(ctx, c, w)
		if err != nil {
			return nil, err
		}
		var lbls map[string]string
		if ov.NeedsLabels() {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: w.Namespace}, mc); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("read ManagedCluster %s for the set's overrides by label: %w", w.Namespace, err)
			}
			lbls = mc.Labels
		}
		s, _, err := ov.SpecFor(w.Namespace, lbls)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", w.Namespace, err)
		}
		// Overrides change the manifests of a template, never those inside
		// a payload.
		after := s.Workload.Manifests
		if o.payload != nil {
			after = manifests
		}
		targets = append(targets, &diffTarget{cluster: w.Namespace, current: w, spec: *s, before: before, after: after})
	}
	return targets, nil
}

// applied returns an error unless w applied its current generation.
func applied(w *workv1.ManifestWork) error {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
		return fmt.Errorf("ManifestWork %s in cluster %s has not applied yet (Applied is not True for its generation %d): a diff compares new manifests with what it applied; wait for it with `kubectl ocm work get %s --clusters %s`",
			w.Name, w.Namespace, w.Generation, w.Name, w.Namespace)
	}
	return nil
}
