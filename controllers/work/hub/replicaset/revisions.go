package replicaset

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// The revision history of each set (pkg/rollout/revision), read from the
// cache, which holds only the ControllerRevisions of sets.
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete

// revisions is where the revision history of a set stands.
type revisions struct {
	// hash and number identify the current revision.
	hash   string
	number int64
	// previous is the newest earlier revision kept, nil without one.
	previous *appsv1.ControllerRevision
	// kept are the numbers of the revisions kept, the current one included.
	kept map[int64]bool
}

// syncRevisions keeps the revision history of mwrs: the ControllerRevision
// of its current template gets the highest number (a new one, or an earlier
// one renumbered when the template returns to it, as a Deployment's), the
// oldest beyond the history limit go, and the set's revision annotation
// names the current number.
func (r *Reconciler) syncRevisions(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet, limit int) (revisions, error) {
	data, hash, err := revision.Of(mwrs).Encode()
	if err != nil {
		return revisions{}, err
	}
	list := &appsv1.ControllerRevisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(mwrs.Namespace), client.MatchingLabels{revision.SetLabel: revision.SetLabelValue(mwrs.Name)}); err != nil {
		return revisions{}, fmt.Errorf("list the revisions of %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	var revs []*appsv1.ControllerRevision
	var cur *appsv1.ControllerRevision
	var highest int64
	for i := range list.Items {
		cr := &list.Items[i]
		if !metav1.IsControlledBy(cr, mwrs) {
			continue
		}
		revs = append(revs, cr)
		highest = max(highest, cr.Revision)
		if cr.Labels[revision.HashLabel] == hash {
			cur = cr
		}
	}
	switch {
	case cur == nil:
		cur = &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: revision.Name(mwrs.Name, hash), Namespace: mwrs.Namespace,
				Labels:          map[string]string{revision.SetLabel: revision.SetLabelValue(mwrs.Name), revision.HashLabel: hash},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mwrs, workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet"))}},
			Data:     runtime.RawExtension{Raw: data},
			Revision: highest + 1,
		}
		if err := r.Client.Create(ctx, cur); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return revisions{}, errStale
			}
			return revisions{}, fmt.Errorf("create ControllerRevision %s/%s: %w", cur.Namespace, cur.Name, err)
		}
		revs = append(revs, cur)
	case cur.Revision != highest:
		cur.Revision = highest + 1
		if err := r.Client.Update(ctx, cur); err != nil {
			if apierrors.IsConflict(err) {
				return revisions{}, errStale
			}
			return revisions{}, fmt.Errorf("renumber ControllerRevision %s/%s: %w", cur.Namespace, cur.Name, err)
		}
	}
	revision.Sort(revs)
	var earlier []*appsv1.ControllerRevision
	for _, cr := range revs {
		if cr != cur {
			earlier = append(earlier, cr)
		}
	}
	for len(earlier) > limit {
		if err := r.Client.Delete(ctx, earlier[0], client.Preconditions{UID: &earlier[0].UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return revisions{}, fmt.Errorf("delete ControllerRevision %s/%s: %w", earlier[0].Namespace, earlier[0].Name, err)
		}
		earlier = earlier[1:]
	}
	if mwrs.Annotations == nil {
		mwrs.Annotations = map[string]string{}
	}
	mwrs.Annotations[revision.Annotation] = strconv.FormatInt(cur.Revision, 10)
	out := revisions{hash: hash, number: cur.Revision, kept: map[int64]bool{cur.Revision: true}}
	for _, cr := range earlier {
		out.kept[cr.Revision] = true
	}
	if len(earlier) > 0 {
		out.previous = earlier[len(earlier)-1]
	}
	return out, nil
}
