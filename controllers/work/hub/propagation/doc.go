// Package propagation measures how long a ManifestWork's change takes to be
// applied on its cluster and exports it as the Prometheus histogram
// ocm_manifestwork_propagation_seconds: from the moment the hub controller
// sees a new work or a new generation of one, to the moment it sees the
// work's Applied condition True for that generation, which the cluster's
// agent writes. Both ends are seen through the hub controller's cache of
// ManifestWorks, so the figure is what a user on the hub waits, less the
// cache's own delay (milliseconds) at the start.
//
// Only changes seen while the controller runs are measured: after a restart,
// works already waiting are not. A change superseded by a newer generation
// before it is applied is dropped; the newer one is measured from its own
// change. The elected replica alone records, so a standby never reports the
// same change twice.
package propagation
