// Package apply applies the manifests of a ManifestWork to the managed
// cluster and removes what is no longer wanted. It knows nothing about the
// hub: the work agent's controllers give it parsed manifests, the owner
// reference to set and the update strategy, and get back the live objects.
//
// It holds the pieces the rest of the work agent reuses: the kind order OCM
// applies in, the owner-reference rules behind deleteOption, a RESTMapper that
// refreshes itself when a CustomResourceDefinition appears, the update
// strategies (Update, CreateOnly, ServerSideApply, ReadOnly) and owner-aware
// deletion.
// Status feedback, condition rules and drift detection read the live objects
// the strategies return; an executor check can wrap Applier.Apply.
package apply
