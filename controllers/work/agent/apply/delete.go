package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// resourceFor returns the client of an applied resource.
func (a *Applier) resourceFor(res workv1.AppliedManifestResourceMeta) dynamic.ResourceInterface {
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Resource}
	if res.Namespace == "" {
		return a.dyn.Resource(gvr)
	}
	return a.dyn.Resource(gvr).Namespace(res.Namespace)
}

// Remove takes an applied resource away from the AppliedManifestWork with
// owner UID ownerUID. An object owned only by it is deleted (UID
// precondition, background propagation); one with other owners just loses
// the reference; one not owned by it (orphaned) is left alone. gone is true
// once nothing remains to wait for: the object no longer exists, is another
// object with the same name, or is not (or no longer) owned by the record.
func (a *Applier) Remove(ctx context.Context, res workv1.AppliedManifestResourceMeta, ownerUID types.UID) (gone bool, err error) {
	ri := a.resourceFor(res)
	obj, err := ri.Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if res.UID != "" && string(obj.GetUID()) != res.UID {
		return true, nil
	}
	refs := obj.GetOwnerReferences()
	if !IsOwnedBy(refs, ownerUID) {
		return true, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if len(refs) > 1 {
		rest, _ := withOwner(refs, metav1.OwnerReference{UID: ownerUID}, false)
		_, err := patchOwners(ctx, ri, obj, rest)
		return err == nil || apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	uid := obj.GetUID()
	background := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, res.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background,
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	// Most objects are gone at once; those with finalizers are waited for.
	_, err = ri.Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// Release removes the AppliedManifestWork's owner reference from an applied
// object, so that deleting the record leaves the object in place.
func (a *Applier) Release(ctx context.Context, res workv1.AppliedManifestResourceMeta, ownerUID types.UID) error {
	ri := a.resourceFor(res)
	obj, err := ri.Get(ctx, res.Name, metav1.GetOptions{})
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	refs, changed := withOwner(obj.GetOwnerReferences(), metav1.OwnerReference{UID: ownerUID}, false)
	if !changed {
		return nil
	}
	_, err = patchOwners(ctx, ri, obj, refs)
	return client.IgnoreNotFound(err)
}
