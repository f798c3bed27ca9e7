package deploy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// listWorks returns the ManifestWorks labeled with the add-on in its
// cluster's namespace, by name.
func (r *Reconciler) listWorks(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, list, client.InNamespace(mca.Namespace), client.MatchingLabels{addonv1alpha1.AddonLabelKey: mca.Name}); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of add-on %s in %s: %w", mca.Name, mca.Namespace, err)
	}
	works := make(map[string]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		works[list.Items[i].Name] = &list.Items[i]
	}
	return works, nil
}

// deployWorks returns the deploy works among works, in index order.
func deployWorks(works map[string]*workv1.ManifestWork, addon string) []*workv1.ManifestWork {
	all := make([]*workv1.ManifestWork, 0, len(works))
	for _, w := range works {
		all = append(all, w)
	}
	return template.SelectDeployWorks(addon, all)
}

// writeDeployWorks writes one deploy work per spec and deletes the deploy
// works beyond them. It returns the works as written.
func (r *Reconciler) writeDeployWorks(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, src *source,
	specs []workv1.ManifestWorkSpec, existing map[string]*workv1.ManifestWork) ([]*workv1.ManifestWork, error) {
	workLabels := map[string]string{addonv1alpha1.AddonLabelKey: mca.Name, addonv1alpha1.AddonTemplateLabelKey: src.template.Name}
	annotations := map[string]string{workv1.ConfigSpecHashAnnotationKey: src.hashes.Annotation()}
	var written []*workv1.ManifestWork
	for i := range specs {
		name := template.DeployWorkName(mca.Name, i)
		w, err := r.writeWork(ctx, mca, existing[name], client.ObjectKey{Namespace: mca.Namespace, Name: name}, &specs[i], workLabels, annotations)
		if err != nil {
			return nil, err
		}
		written = append(written, w)
	}
	for name, w := range existing {
		if i, ok := template.DeployWorkIndex(mca.Name, name); ok && i >= len(specs) {
			if err := r.deleteWork(ctx, w); err != nil {
				return nil, err
			}
		}
	}
	return written, nil
}

// writeWork creates the work key of the add-on mca, or updates current, so
// that it has spec, workLabels and annotations; a work in mca's namespace is
// controlled by mca (a hosting work, in another namespace, cannot be: the
// hosting finalizer removes it). The labels and annotations of others are
// kept.
func (r *Reconciler) writeWork(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, current *workv1.ManifestWork, key client.ObjectKey,
	spec *workv1.ManifestWorkSpec, workLabels, annotations map[string]string) (*workv1.ManifestWork, error) {
	w := current.DeepCopy()
	if current == nil {
		w = &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	}
	w.Labels = labels.Merge(w.Labels, workLabels)
	w.Annotations = labels.Merge(w.Annotations, annotations)
	w.Spec = *spec.DeepCopy()
	if key.Namespace == mca.Namespace {
		if err := controllerutil.SetControllerReference(mca, w, r.Client.Scheme()); err != nil {
			return nil, fmt.Errorf("ManifestWork %s: %w", key, err)
		}
	}
	if current == nil {
		if err := r.Client.Create(ctx, w); err != nil {
			return nil, fmt.Errorf("create ManifestWork %s: %w", key, err)
		}
		return w, nil
	}
	if err := patch.NewHelper(current, r.Client).Patch(ctx, w); err != nil {
		return nil, fmt.Errorf("update ManifestWork %s: %w", key, err)
	}
	return w, nil
}

// deleteWork deletes w in the background; a work already gone is fine.
func (r *Reconciler) deleteWork(ctx context.Context, w *workv1.ManifestWork) error {
	if !w.DeletionTimestamp.IsZero() {
		return nil
	}
	err := r.Client.Delete(ctx, w, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &w.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}
