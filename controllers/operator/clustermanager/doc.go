// Package clustermanager is the ClusterManager operator (`ocm-controller
// operator hub`): it renders the hub (config.HubObjects) from the
// ClusterManager, applies it with server-side apply under field manager
// cluster-manager, deletes what it no longer renders, reports on the
// ClusterManager's status what runs (Applied, Available, Progressing,
// HubRegistrationDegraded, HubPlacementDegraded, generations,
// relatedResources), and removes the hub when the ClusterManager is
// deleted (pkg/hubclean). The hub controller's TLS profile (its
// --tls-min-version and --tls-cipher-suites, with a hash in the pod
// template) is the ClusterManager's spec.tlsProfile over the ConfigMap
// ocm-tls-profile in the operator's namespace (config.ResolveTLSProfile),
// which the operator watches; a bad one is refused on the Applied
// condition and changes nothing.
package clustermanager
