package v1

// Condition types of a ManagedCluster. The wire values are OCM's, including
// the uneven naming of ManagedClusterConditionAvailable.
const (
	// ManagedClusterConditionHubAccepted is True once a hub administrator has
	// accepted the cluster (spec.hubAcceptsClient) and the hub has set up its
	// namespace and permissions.
	ManagedClusterConditionHubAccepted = "HubAcceptedManagedCluster"
	// ManagedClusterConditionHubDenied is defined for compatibility; OCM never
	// sets it.
	ManagedClusterConditionHubDenied = "HubDeniedManagedCluster"
	// ManagedClusterConditionJoined is True once the agent holds a hub client
	// certificate and reports status for an accepted cluster.
	ManagedClusterConditionJoined = "ManagedClusterJoined"
	// ManagedClusterConditionAvailable reports whether the managed cluster's API
	// server is healthy and its agent is renewing its lease.
	ManagedClusterConditionAvailable = "ManagedClusterConditionAvailable"
	// ManagedClusterConditionClockSynced reports whether the agent's clock is
	// close enough to the hub's, judged from lease renewal times.
	ManagedClusterConditionClockSynced = "ManagedClusterConditionClockSynced"
	// ManagedClusterConditionDeleting reports the progress of cleaning up the
	// cluster namespace while the ManagedCluster is being deleted.
	ManagedClusterConditionDeleting = "Deleting"
	// ManagedClusterConditionCertificateRotated reports the outcome of the
	// agent's last client certificate rotation.
	ManagedClusterConditionCertificateRotated = "ClusterCertificateRotated"
)

// Reasons of the ManagedCluster conditions.
const (
	// ReasonHubClusterAdminAccepted is the HubAcceptedManagedCluster=True reason.
	ReasonHubClusterAdminAccepted = "HubClusterAdminAccepted"
	// ReasonHubClusterAdminDenied is the HubAcceptedManagedCluster=False reason
	// after an administrator set spec.hubAcceptsClient back to false.
	ReasonHubClusterAdminDenied = "HubClusterAdminDenied"
	// ReasonHubAcceptError is the HubAcceptedManagedCluster=False reason when
	// setting up the accepted cluster failed.
	ReasonHubAcceptError = "Error"
	// ReasonNamespaceInUse is the HubAcceptedManagedCluster=False reason
	// when a namespace of the cluster's name exists that is not the
	// cluster's own (pkg/clusternamespace), or is still being deleted: the
	// hub binds the cluster's agent in no namespace it did not create for
	// the cluster.
	ReasonNamespaceInUse = "NamespaceInUse"
	// ReasonManagedClusterJoined is the ManagedClusterJoined=True reason.
	ReasonManagedClusterJoined = "ManagedClusterJoined"
	// ReasonManagedClusterAvailable is the ManagedClusterConditionAvailable=True reason.
	ReasonManagedClusterAvailable = "ManagedClusterAvailable"
	// ReasonManagedClusterKubeAPIServerUnavailable is the
	// ManagedClusterConditionAvailable=False reason: the managed cluster's API
	// server failed its health check.
	ReasonManagedClusterKubeAPIServerUnavailable = "ManagedClusterKubeAPIServerUnavailable"
	// ReasonManagedClusterLeaseUpdateStopped is the
	// ManagedClusterConditionAvailable=Unknown reason: the agent stopped renewing its lease.
	ReasonManagedClusterLeaseUpdateStopped = "ManagedClusterLeaseUpdateStopped"
	// ReasonManagedClusterClockSynced is the ManagedClusterConditionClockSynced=True reason.
	ReasonManagedClusterClockSynced = "ManagedClusterClockSynced"
	// ReasonManagedClusterClockOutOfSync is the ManagedClusterConditionClockSynced=False reason.
	ReasonManagedClusterClockOutOfSync = "ManagedClusterClockOutOfSync"
	// ReasonClientCertificateUpdated is the ClusterCertificateRotated=True reason.
	ReasonClientCertificateUpdated = "ClientCertificateUpdated"
	// ReasonClientCertificateUpdateFailed is the ClusterCertificateRotated=False reason.
	ReasonClientCertificateUpdateFailed = "ClientCertificateUpdateFailed"
	// ConditionDeletingReasonResourceRemaining is the Deleting=False reason while
	// resources remain in the cluster namespace.
	ConditionDeletingReasonResourceRemaining = "ResourceRemaining"
	// ConditionDeletingReasonNoResource is the Deleting=True reason once the
	// cluster namespace holds no more resources to clean up.
	ConditionDeletingReasonNoResource = "NoResource"
	// ConditionDeletingReasonResourceError is the Deleting=False reason when
	// cleaning up failed.
	ConditionDeletingReasonResourceError = "DeletingError"
)

// Condition type and reasons of a managed namespace in
// status.managedNamespaces[].conditions.
const (
	// ManagedNamespaceConditionAvailable reports whether the agent created the namespace.
	ManagedNamespaceConditionAvailable = "NamespaceAvailable"
	// ReasonManagedNamespaceApplied is the NamespaceAvailable=True reason.
	ReasonManagedNamespaceApplied = "NamespaceApplied"
	// ReasonManagedNamespaceApplyFailed is the NamespaceAvailable=False reason.
	ReasonManagedNamespaceApplyFailed = "NamespaceApplyFailed"
)

// Condition type and reasons of the ManagedCluster about the managed
// namespaces that the cluster no longer gets from any set. The agent removes
// such a namespace unless it holds objects no ManifestWork owns; then it keeps
// the namespace, labels it ManagedNamespaceLabelKeyPrefix<hub hash>=false and
// reports it with this condition. OCM has no such condition: its agent only
// relabels such namespaces.
const (
	// ManagedClusterConditionManagedNamespacesRetained is True while the
	// agent keeps namespaces that are no longer managed because they hold
	// objects no ManifestWork owns; its message names them.
	ManagedClusterConditionManagedNamespacesRetained = "ManagedNamespacesRetained"
	// ReasonManagedNamespaceNotEmpty is the ManagedNamespacesRetained=True reason.
	ReasonManagedNamespaceNotEmpty = "NamespaceHoldsUnownedObjects"
	// ReasonNoManagedNamespaceRetained is the ManagedNamespacesRetained=False
	// reason, once no retained namespace is left.
	ReasonNoManagedNamespaceRetained = "NoNamespaceRetained"
)

// Taint keys managed by the hub.
const (
	// ManagedClusterTaintUnavailable is added (effect NoSelect) while the
	// cluster's ManagedClusterConditionAvailable condition is False.
	ManagedClusterTaintUnavailable = "cluster.open-cluster-management.io/unavailable"
	// ManagedClusterTaintUnreachable is added (effect NoSelect) while the
	// cluster's ManagedClusterConditionAvailable condition is Unknown or missing.
	ManagedClusterTaintUnreachable = "cluster.open-cluster-management.io/unreachable"
	// ManagedClusterTaintTerminating marks a cluster that is being deleted.
	ManagedClusterTaintTerminating = "cluster.open-cluster-management.io/terminating"
)

// Labels, annotations and finalizers used with ManagedClusters.
const (
	// ClusterNameLabelKey labels objects that belong to one managed cluster
	// (its namespace on the hub, its CSRs, its lease) with the cluster name.
	ClusterNameLabelKey = "open-cluster-management.io/cluster-name"

	// ManagedClusterFinalizer lets the hub remove the cluster's RBAC before the
	// ManagedCluster goes away.
	ManagedClusterFinalizer = "cluster.open-cluster-management.io/api-resource-cleanup"
	// ResourceCleanupFinalizer lets the hub delete the ManifestWorks and
	// ManagedClusterAddOns in the cluster namespace before the ManagedCluster goes away.
	ResourceCleanupFinalizer = "cluster.open-cluster-management.io/resource-cleanup"

	// CleanupPriorityAnnotationKey orders the deletion of resources in the
	// cluster namespace when the cluster is deleted: resources without it go
	// first, then invalid values, then values 0 to 100 in increasing order.
	CleanupPriorityAnnotationKey = "open-cluster-management.io/cleanup-priority"
	// ClusterImageRegistriesAnnotationKey holds a JSON document of image
	// registry mirrors for the add-ons of the cluster, for example
	// {"registries":[{"source":"quay.io/ocm","mirror":"quay.io/open-cluster-management"}]}.
	ClusterImageRegistriesAnnotationKey = "open-cluster-management.io/image-registries"
	// AutomaticallyAcceptedOnAnnotationKey records when the hub accepted the
	// cluster automatically (ManagedClusterAutoApproval).
	AutomaticallyAcceptedOnAnnotationKey = "open-cluster-management.io/automatically-accepted-on"
	// AutomaticallyAcceptedForAnnotationKey holds the metadata.uid of the
	// certificate request whose auto-approved first join accepted the
	// cluster, beside AutomaticallyAcceptedOnAnnotationKey: that request
	// alone, retried, is still a first join. A UID is never reused, unlike a
	// request's name; a name recorded by an older hub matches no request.
	AutomaticallyAcceptedForAnnotationKey = "kubectl-ocm.io/automatically-accepted-for"
	// AgentKeyAnnotationKey holds the key of the cluster's agent as the hub
	// last saw it proven: the pin (sha256:<hex> of the DER
	// SubjectPublicKeyInfo) of the key of the request whose approval
	// registered the agent, moved to the key of each renewal the hub
	// approves. An auto-approved bootstrap identity registers an accepted
	// cluster again only with this key. Only the hub writes it.
	AgentKeyAnnotationKey = "kubectl-ocm.io/agent-key-sha256"
	// SkipClockSyncCheckAnnotationKey set to "true" makes the hub treat the
	// cluster's clock as synced.
	SkipClockSyncCheckAnnotationKey = "registration.open-cluster-management.io/skip-clock-sync-check"

	// AddOnFeatureLabelKeyPrefix prefixes the label the hub sets on a
	// ManagedCluster for each of its add-ons: <prefix><addon-name>.
	AddOnFeatureLabelKeyPrefix = "feature.open-cluster-management.io/addon-"
	// AddOnFeatureLabelValueAvailable is the add-on feature label value of an available add-on.
	AddOnFeatureLabelValueAvailable = "available"
	// AddOnFeatureLabelValueUnhealthy is the add-on feature label value of an unavailable add-on.
	AddOnFeatureLabelValueUnhealthy = "unhealthy"
	// AddOnFeatureLabelValueUnreachable is the add-on feature label value of an
	// add-on whose health is unknown.
	AddOnFeatureLabelValueUnreachable = "unreachable"

	// ManagedNamespaceLabelKeyPrefix prefixes the label the agent sets on a
	// managed namespace it created: <prefix><hub hash, at most 63 characters>
	// (ManagedNamespaceLabelKey), "true" while a set of that hub asks for
	// the namespace, "false" once none does but the namespace was kept.
	ManagedNamespaceLabelKeyPrefix = "clusterset.open-cluster-management.io/"
	// RetainedObjectsAnnotationKey is set by the agent on a namespace it
	// kept although no set asks for it any more: which objects no
	// ManifestWork owns it found there.
	RetainedObjectsAnnotationKey = "kubectl-ocm.io/retained-objects"
)

// Names and durations used with ManagedClusters.
const (
	// LeaseName is the name of the Lease in the cluster namespace that the agent renews.
	LeaseName = "managed-cluster-lease"
	// DefaultLeaseDurationSeconds is the lease renewal period used when
	// spec.leaseDurationSeconds is zero.
	DefaultLeaseDurationSeconds = 60
	// LeaseGraceFactor is how many lease periods the hub waits for a renewal
	// before it reports the cluster's availability as Unknown.
	LeaseGraceFactor = 5
)
