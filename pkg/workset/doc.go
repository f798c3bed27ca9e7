// Package workset holds the rules of ManifestWorkReplicaSets that the hub
// controller and `kubectl ocm` share: the spec of each cluster's
// ManifestWork, the template with the set's overrides that choose the
// cluster applied (Overrider), and its spec hash.
package workset
