package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ownerKey is the key of the ManifestWorkReplicaSet namespace/name:
// <namespace>.<name>, unambiguous because namespaces cannot contain dots.
func ownerKey(namespace, name string) string { return namespace + "." + name }

// OwnerKeyHash returns the value of the
// work.open-cluster-management.io/ownerkey-hash label of the ManifestWorks of
// the ManifestWorkReplicaSet namespace/name: the first 32 hexadecimal digits
// of the SHA-256 of <namespace>.<name>, a valid label value whatever the
// length of the names.
func OwnerKeyHash(namespace, name string) string {
	sum := sha256.Sum256([]byte(ownerKey(namespace, name)))
	return hex.EncodeToString(sum[:])[:32]
}

// fitsLabel reports whether <namespace>.<name> is a valid label value, so
// that the ManifestWorks of namespace/name carry it in the
// work.open-cluster-management.io/manifestworkreplicaset label.
func fitsLabel(namespace, name string) bool {
	return len(validation.IsValidLabelValue(ownerKey(namespace, name))) == 0
}

// OwnerLabels returns the labels that mark a ManifestWork as one of the
// ManifestWorkReplicaSet namespace/name, and select its ManifestWorks:
//   - work.open-cluster-management.io/manifestworkreplicaset=<namespace>.<name>
//     when that is a valid label value (at most 63 characters), as always;
//   - work.open-cluster-management.io/ownerkey-hash=OwnerKeyHash(namespace, name)
//     when it is longer, with the set named by OwnerAnnotations.
//
// A set keeps one form for its life: namespaces and names are immutable.
func OwnerLabels(namespace, name string) map[string]string {
	if fitsLabel(namespace, name) {
		return map[string]string{ManifestWorkReplicaSetControllerNameLabelKey: ownerKey(namespace, name)}
	}
	return map[string]string{ManifestWorkReplicaSetOwnerKeyHashLabelKey: OwnerKeyHash(namespace, name)}
}

// OwnerAnnotations returns the annotations a ManifestWork of the
// ManifestWorkReplicaSet namespace/name carries besides OwnerLabels: when
// the owner label is a hash, work.open-cluster-management.io/manifestworkreplicaset-owner
// names the set as <namespace>/<name>, so that OwnerOf finds it; nil
// otherwise.
func OwnerAnnotations(namespace, name string) map[string]string {
	if fitsLabel(namespace, name) {
		return nil
	}
	return map[string]string{ManifestWorkReplicaSetOwnerAnnotationKey: namespace + "/" + name}
}

// OwnerOf returns the namespace and name of the ManifestWorkReplicaSet that
// owns the ManifestWork obj, from its labels and annotations (OwnerLabels,
// OwnerAnnotations). ok is false for a ManifestWork of no set, and for one
// whose hash label does not match the set its annotation names.
func OwnerOf(obj metav1.Object) (namespace, name string, ok bool) {
	if value, found := obj.GetLabels()[ManifestWorkReplicaSetControllerNameLabelKey]; found {
		return ParseControllerNameLabelValue(value)
	}
	hash, found := obj.GetLabels()[ManifestWorkReplicaSetOwnerKeyHashLabelKey]
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(obj.GetAnnotations()[ManifestWorkReplicaSetOwnerAnnotationKey], "/")
	if !ok || namespace == "" || name == "" || OwnerKeyHash(namespace, name) != hash {
		return "", "", false
	}
	return namespace, name, true
}

// Owns reports whether the ManifestWork obj belongs to the
// ManifestWorkReplicaSet namespace/name.
func Owns(namespace, name string, obj metav1.Object) bool {
	ns, n, ok := OwnerOf(obj)
	return ok && ns == namespace && n == name
}

// HasOwnerLabel reports whether the ManifestWork obj carries an owner label
// of a ManifestWorkReplicaSet, short or hashed: it was created by one.
func HasOwnerLabel(obj metav1.Object) bool {
	labels := obj.GetLabels()
	_, short := labels[ManifestWorkReplicaSetControllerNameLabelKey]
	_, hashed := labels[ManifestWorkReplicaSetOwnerKeyHashLabelKey]
	return short || hashed
}

// ParseControllerNameLabelValue splits a
// work.open-cluster-management.io/manifestworkreplicaset label value into the
// namespace and name of the ManifestWorkReplicaSet. Namespaces cannot contain
// dots, so the value is split at the first one.
func ParseControllerNameLabelValue(value string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(value, ".")
	if !ok || namespace == "" || name == "" {
		return "", "", false
	}
	return namespace, name, true
}
