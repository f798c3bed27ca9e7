// Package v1alpha1 contains the work.kubectl-ocm.io/v1alpha1 API of
// kubectl-ocm: what a ManifestWork needs to carry more manifests than the
// hub can keep in one object, without changing OCM's kinds.
//
// A large payload is stored as ManifestChunks, each named by the digest of
// its content, in the namespace of the ManifestWork. The work itself holds a
// single manifest of kind ManifestPayload that lists the chunks in order; the
// work agent fetches and verifies every chunk before it applies any of the
// manifests they hold. See docs/design/large-payloads.md.
//
// +kubebuilder:object:generate=true
// +groupName=work.kubectl-ocm.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "work.kubectl-ocm.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ManifestChunk{},
		&ManifestChunkList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
