package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// OwnerReference returns the owner reference that ties an applied object to
// its AppliedManifestWork, so that deleting the record (by the agent, or by
// an administrator after the agent is gone) deletes the object.
func OwnerReference(amw *workv1.AppliedManifestWork) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: workv1.GroupVersion.String(),
		Kind:       "AppliedManifestWork",
		Name:       amw.Name,
		UID:        amw.UID,
	}
}

// OwnedByTheWork reports whether the ManifestWork owns the resource id under
// its delete option: whether the resource is deleted with the work (or when
// it leaves the work), which is whether the option does not orphan it
// (workv1.DeleteOption.Orphans, the rule `kubectl ocm work diff` applies too).
//
// An owned object carries the AppliedManifestWork's owner reference; an
// orphaned one carries none. (OCM writes a reference with a mangled UID
// instead; the garbage collector treats such a reference as dangling, so an
// object whose only owner it is may be collected. No reference is safe.)
func OwnedByTheWork(id workv1.ResourceIdentifier, opt *workv1.DeleteOption) bool {
	return !opt.Orphans(id)
}

// withOwner returns refs with owner present (owned) or absent (not owned)
// and whether that changed refs. The owner is recognized by its UID.
func withOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference, owned bool) ([]metav1.OwnerReference, bool) {
	idx := indexOfOwner(refs, owner.UID)
	switch {
	case owned && idx < 0:
		return append(append([]metav1.OwnerReference(nil), refs...), owner), true
	case !owned && idx >= 0:
		out := append([]metav1.OwnerReference(nil), refs[:idx]...)
		return append(out, refs[idx+1:]...), true
	default:
		return refs, false
	}
}

// indexOfOwner returns the index of the reference with uid, or -1.
func indexOfOwner(refs []metav1.OwnerReference, uid types.UID) int {
	for i := range refs {
		if refs[i].UID == uid {
			return i
		}
	}
	return -1
}

// IsOwnedBy reports whether refs contain a reference with uid.
func IsOwnedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	return indexOfOwner(refs, uid) >= 0
}
