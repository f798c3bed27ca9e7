// Package clustermanager is the ClusterManager operator (`ocm-controller
// operator hub`): it renders the hub (config.HubObjects) from the
// ClusterManager, applies it with server-side apply under field manager
// cluster-manager, deletes what it no longer renders, reports on the
// ClusterManager's status what runs (Applied, Available, Progressing,
// HubRegistrationDegraded, HubPlacementDegraded, generations,
// relatedResources), and removes the hub when the ClusterManager is
// deleted (pkg/hubclean).
package clustermanager
