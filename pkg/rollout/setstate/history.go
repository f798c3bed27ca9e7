package setstate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// History is a set and its kept revisions.
type History struct {
	// Set is the ManifestWorkReplicaSet.
	Set *workv1alpha1.ManifestWorkReplicaSet
	// Revisions are its ControllerRevisions, oldest first.
	Revisions []*appsv1.ControllerRevision
}

// ReadHistory reads ManifestWorkReplicaSet namespace/name and its revisions.
func ReadHistory(ctx context.Context, c client.Client, namespace, name string) (*History, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -n %s`", name, namespace, namespace)
		}
		return nil, fmt.Errorf("read ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	revs, err := listRevisions(ctx, c, set)
	if err != nil {
		return nil, err
	}
	return &History{Set: set, Revisions: revs}, nil
}

// listRevisions returns the revisions of mwrs, oldest first.
func listRevisions(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(mwrs.Namespace), client.MatchingLabels{revision.SetLabel: revision.SetLabelValue(mwrs.Name)}); err != nil {
		return nil, fmt.Errorf("list the revisions of ManifestWorkReplicaSet %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], mwrs) {
			out = append(out, &list.Items[i])
		}
	}
	revision.Sort(out)
	return out, nil
}

// Current returns the newest revision, nil without any.
func (h *History) Current() *appsv1.ControllerRevision {
	if len(h.Revisions) == 0 {
		return nil
	}
	return h.Revisions[len(h.Revisions)-1]
}

// Find returns revision number n, nil when it is not kept.
func (h *History) Find(n int64) *appsv1.ControllerRevision {
	for _, cr := range h.Revisions {
		if cr.Revision == n {
			return cr
		}
	}
	return nil
}

// Numbers lists the kept revision numbers, comma separated.
func (h *History) Numbers() string {
	out := make([]string, 0, len(h.Revisions))
	for _, cr := range h.Revisions {
		out = append(out, strconv.FormatInt(cr.Revision, 10))
	}
	return strings.Join(out, ", ")
}

// ClustersByHash returns the clusters whose ManifestWork of the set was
// written from each revision hash.
func (h *History) ClustersByHash(ctx context.Context, c client.Client) (map[string][]string, error) {
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels(workv1alpha1.OwnerLabels(h.Set.Namespace, h.Set.Name))); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", h.Set.Namespace, h.Set.Name, err)
	}
	out := map[string][]string{}
	for _, w := range works.Items {
		if !workv1alpha1.Owns(h.Set.Namespace, h.Set.Name, &w) {
			continue
		}
		hash := w.Annotations[revision.HashAnnotation]
		out[hash] = append(out[hash], w.Namespace)
	}
	return out, nil
}

// RevisionNumbers maps the hashes of the kept revisions of mwrs to their
// numbers; none when the caller may not list ControllerRevisions.
func RevisionNumbers(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) (map[string]int64, error) {
	revs, err := listRevisions(ctx, c, mwrs)
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, cr := range revs {
		out[cr.Labels[revision.HashLabel]] = cr.Revision
	}
	return out, nil
}

// RevisionReport is one kept revision of a ManifestWorkReplicaSet.
type RevisionReport struct {
	Revision int64     `json:"revision"`
	Hash     string    `json:"hash"`
	Created  time.Time `json:"created"`
	// Clusters have a ManifestWork of the set written from the revision.
	Clusters []string `json:"clusters,omitempty"`
	Current  bool     `json:"current,omitempty"`
}

// Revisions reads the kept revisions of ManifestWorkReplicaSet
// namespace/name, oldest first, with the clusters at each.
func Revisions(ctx context.Context, c client.Client, namespace, name string) ([]RevisionReport, error) {
	h, err := ReadHistory(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	clusters, err := h.ClustersByHash(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]RevisionReport, 0, len(h.Revisions))
	for _, cr := range h.Revisions {
		hash := cr.Labels[revision.HashLabel]
		names := slices.Clone(clusters[hash])
		slices.Sort(names)
		out = append(out, RevisionReport{Revision: cr.Revision, Hash: hash, Created: cr.CreationTimestamp.UTC(), Clusters: names, Current: cr == h.Current()})
	}
	return out, nil
}
