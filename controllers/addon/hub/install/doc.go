// Package install is the add-on manager's install controller. For every
// ClusterManagementAddOn the add-on manager manages, it gives each of the
// add-on's ManagedClusterAddOns an owner reference to the
// ClusterManagementAddOn (so that deleting it garbage-collects them), and,
// for the Placements install strategy, creates a ManagedClusterAddOn in the
// namespace of every cluster the placements decide and deletes the ones it
// created when their cluster leaves all of them, as OCM's add-on manager does.
// For every add-on whose install strategy is not Manual, it also copies the
// addon.open-cluster-management.io/ annotations of each cluster to the
// add-on's ManagedClusterAddOn there, and removes those it copied once the
// cluster drops them (mergeClusterAnnotations).
package install
