package v1

// Condition types and reasons of a ClusterManager.
const (
	// ConditionClusterManagerApplied is True when every hub component was applied.
	ConditionClusterManagerApplied = "Applied"
	// ConditionHubRegistrationDegraded is True when the registration controller
	// is not serving.
	ConditionHubRegistrationDegraded = "HubRegistrationDegraded"
	// ConditionHubPlacementDegraded is True when the placement controller is not serving.
	ConditionHubPlacementDegraded = "HubPlacementDegraded"
	// ConditionProgressing is True while the hub components are rolling out.
	ConditionProgressing = "Progressing"
	// ConditionClusterManagerAvailable is True when the hub controller
	// Deployment is available at its current pod template.
	ConditionClusterManagerAvailable = "Available"
	// ConditionMigrationSucceeded reports the storage version migration of the hub APIs.
	ConditionMigrationSucceeded = "MigrationSucceeded"

	// ReasonClusterManagerApplied is the Applied=True reason.
	ReasonClusterManagerApplied = "ClusterManagerApplied"
	// ReasonRuntimeResourceApplyFailed: applying the Deployments failed.
	ReasonRuntimeResourceApplyFailed = "RuntimeResourceApplyFailed"
	// ReasonServiceAccountSyncFailed: applying the ServiceAccounts failed.
	ReasonServiceAccountSyncFailed = "ServiceAccountSyncFailed"
	// ReasonClusterManagerCRDApplyFailed: applying the CRDs failed.
	ReasonClusterManagerCRDApplyFailed = "CRDApplyFailed"
	// ReasonWebhookApplyFailed: applying the webhooks failed.
	ReasonWebhookApplyFailed = "WebhookApplyFailed"
	// ReasonClusterManagerDeploymentRolling is the Progressing=True reason:
	// a hub Deployment is rolling out.
	ReasonClusterManagerDeploymentRolling = "ClusterManagerDeploymentRolling"
	// ReasonClusterManagerUpToDate is the Progressing=False reason: the hub
	// Deployments run their current pod templates.
	ReasonClusterManagerUpToDate = "ClusterManagerUpToDate"
	// ReasonStorageVersionMigrationFailed is a MigrationSucceeded=False reason.
	ReasonStorageVersionMigrationFailed = "StorageVersionMigrationFailed"
	// ReasonStorageVersionMigrationProcessing is a MigrationSucceeded=False reason.
	ReasonStorageVersionMigrationProcessing = "StorageVersionMigrationProcessing"
	// ReasonStorageVersionMigrationSucceed is the MigrationSucceeded=True reason.
	ReasonStorageVersionMigrationSucceed = "StorageVersionMigrationSucceed"
	// ReasonGetRegistrationDeploymentFailed is a HubRegistrationDegraded=True reason.
	ReasonGetRegistrationDeploymentFailed = "GetRegistrationDeploymentFailed"
	// ReasonUnavailableRegistrationPod is a HubRegistrationDegraded=True reason.
	ReasonUnavailableRegistrationPod = "UnavailableRegistrationPod"
	// ReasonRegistrationFunctional is the HubRegistrationDegraded=False reason.
	ReasonRegistrationFunctional = "RegistrationFunctional"
	// ReasonGetPlacementDeploymentFailed is a HubPlacementDegraded=True reason.
	ReasonGetPlacementDeploymentFailed = "GetPlacementDeploymentFailed"
	// ReasonUnavailablePlacementPod is a HubPlacementDegraded=True reason.
	ReasonUnavailablePlacementPod = "UnavailablePlacementPod"
	// ReasonPlacementFunctional is the HubPlacementDegraded=False reason.
	ReasonPlacementFunctional = "PlacementFunctional"
	// ReasonHubControllerAvailable is the Available=True reason.
	ReasonHubControllerAvailable = "HubControllerAvailable"
	// ReasonHubControllerUnavailable is the Available=False reason; the
	// message is the hub controller Deployment's cause.
	ReasonHubControllerUnavailable = "HubControllerUnavailable"
	// ReasonHubTunnelUnavailable is the Available=False reason while the hub
	// controller is available and the hub tunnel's Deployment is not; the
	// message is the hub tunnel Deployment's cause.
	ReasonHubTunnelUnavailable = "HubTunnelUnavailable"
	// ReasonManagedClustersExist is the Applied=False reason of a deleted
	// ClusterManager whose removal waits for the ManagedClusters to leave.
	ReasonManagedClustersExist = "ManagedClustersExist"
	// ReasonDeletingManagedClusters is the Applied=False reason of a deleted
	// ClusterManager, forced, whose ManagedClusters are being deleted.
	ReasonDeletingManagedClusters = "DeletingManagedClusters"
	// ReasonRemovingCRDs is the Applied=False reason of a deleted
	// ClusterManager whose hub is removed but whose CRDs the API server is
	// still removing (with their custom resources).
	ReasonRemovingCRDs = "RemovingCRDs"
)

// Condition types and reasons of a Klusterlet.
const (
	// ConditionKlusterletApplied is True when every agent component was applied.
	ConditionKlusterletApplied = "Applied"
	// ConditionReadyToApply is True when the installer can reach the managed
	// cluster (Hosted modes).
	ConditionReadyToApply = "ReadyToApply"
	// ConditionKlusterletAvailable is True when the agent is available.
	ConditionKlusterletAvailable = "Available"
	// ConditionHubConnectionDegraded is True when the agent cannot reach the hub.
	ConditionHubConnectionDegraded = "HubConnectionDegraded"
	// ConditionRegistrationDesiredDegraded is True when the registration agent
	// is not serving.
	ConditionRegistrationDesiredDegraded = "RegistrationDesiredDegraded"
	// ConditionWorkDesiredDegraded is True when the work agent is not serving.
	ConditionWorkDesiredDegraded = "WorkDesiredDegraded"

	// ReasonKlusterletApplied is the Applied=True reason.
	ReasonKlusterletApplied = "KlusterletApplied"
	// ReasonKlusterletApplyFailed is an Applied=False reason.
	ReasonKlusterletApplyFailed = "KlusterletApplyFailed"
	// ReasonKlusterletCRDApplyFailed is an Applied=False reason.
	ReasonKlusterletCRDApplyFailed = "CRDApplyFailed"
	// ReasonManagedClusterResourceApplyFailed is an Applied=False reason.
	ReasonManagedClusterResourceApplyFailed = "ManagedClusterResourceApplyFailed"
	// ReasonManagementClusterResourceApplyFailed is an Applied=False reason.
	ReasonManagementClusterResourceApplyFailed = "ManagementClusterResourceApplyFailed"
	// ReasonKlusterletPrepareFailed is the ReadyToApply=False reason.
	ReasonKlusterletPrepareFailed = "KlusterletPrepareFailed"
	// ReasonKlusterletPrepared is the ReadyToApply=True reason.
	ReasonKlusterletPrepared = "KlusterletPrepared"
	// ReasonKlusterletGetDeploymentFailed: reading the agent Deployments failed.
	ReasonKlusterletGetDeploymentFailed = "GetDeploymentFailed"
	// ReasonKlusterletUnavailablePods: some agent pods are unavailable.
	ReasonKlusterletUnavailablePods = "UnavailablePods"
	// ReasonKlusterletDeploymentsFunctional: the agent Deployments are functional.
	ReasonKlusterletDeploymentsFunctional = "DeploymentsFunctional"
	// ReasonKlusterletNoAvailablePods: no agent pod is available.
	ReasonKlusterletNoAvailablePods = "NoAvailablePods"
	// ReasonKlusterletAvailable is the Available=True reason.
	ReasonKlusterletAvailable = "KlusterletAvailable"
	// ReasonKlusterletDeploymentRolling is the Progressing=True reason: the
	// agent Deployment is rolling out.
	ReasonKlusterletDeploymentRolling = "KlusterletDeploymentRolling"
	// ReasonKlusterletUpToDate is the Progressing=False reason: the agent
	// Deployment runs the current pod template.
	ReasonKlusterletUpToDate = "KlusterletUpToDate"
	// ReasonHubConnectionFunctional is the HubConnectionDegraded=False reason.
	ReasonHubConnectionFunctional = "HubConnectionFunctional"
	// ReasonHubKubeConfigSecretMissing: the Secret hub-kubeconfig-secret is missing.
	ReasonHubKubeConfigSecretMissing = "HubKubeConfigSecretMissing"
	// ReasonHubKubeConfigMissing: the Secret has no kubeconfig.
	ReasonHubKubeConfigMissing = "HubKubeConfigMissing"
	// ReasonHubKubeConfigError: the kubeconfig could not be read.
	ReasonHubKubeConfigError = "HubKubeConfigError"
	// ReasonClusterNameMissing: the Secret has no cluster-name.
	ReasonClusterNameMissing = "ClusterNameMissing"
	// ReasonHubKubeConfigUnauthorized: the hub rejects the kubeconfig's credential.
	ReasonHubKubeConfigUnauthorized = "HubKubeConfigUnauthorized"
)

// Names, namespaces and annotation prefixes of an installation.
const (
	// CleanupFinalizer holds a ClusterManager or Klusterlet until its
	// operator has removed what it installed.
	CleanupFinalizer = "operator.open-cluster-management.io/cleanup"
	// ForceCleanAnnotation, "true" on a ClusterManager, lets its deletion
	// delete the remaining ManagedClusters instead of waiting for them.
	ForceCleanAnnotation = "operator.open-cluster-management.io/force-clean"

	// ClusterManagerName is the name of the hub's ClusterManager.
	ClusterManagerName = "cluster-manager"
	// KlusterletName is the name of a managed cluster's Klusterlet.
	KlusterletName = "klusterlet"

	// OperatorNamespace is the namespace of the installer.
	OperatorNamespace = "open-cluster-management"
	// HubNamespace is the namespace of the hub components.
	HubNamespace = "open-cluster-management-hub"
	// DefaultAgentNamespace is the namespace of the agent when the Klusterlet
	// sets none.
	DefaultAgentNamespace = "open-cluster-management-agent"
	// AgentNamespacePrefix is the required prefix of a Klusterlet's namespace.
	AgentNamespacePrefix = "open-cluster-management-"
	// AddonNamespaceSuffix is appended to the agent namespace to form the
	// namespace of add-on agents.
	AddonNamespaceSuffix = "-addon"

	// BootstrapHubKubeConfigSecret holds the agent's bootstrap kubeconfig.
	BootstrapHubKubeConfigSecret = "bootstrap-hub-kubeconfig"
	// HubKubeConfigSecret holds the agent's hub kubeconfig, client certificate,
	// cluster name and agent name.
	HubKubeConfigSecret = "hub-kubeconfig-secret"

	// ClusterAnnotationsKeyPrefix is the prefix every annotation the agent sets
	// on its ManagedCluster must have.
	ClusterAnnotationsKeyPrefix = "agent.open-cluster-management.io"
)

// Reasons of the Klusterlet conditions the agent sets while it registers.
// `kubectl ocm join --wait` shows them.
const (
	// KlusterletReasonBootstrapSecretMissing: the bootstrap kubeconfig Secret is missing.
	KlusterletReasonBootstrapSecretMissing = "BootstrapSecretMissing"
	// KlusterletReasonBootstrapSecretError: the bootstrap kubeconfig cannot be used.
	KlusterletReasonBootstrapSecretError = "BootstrapSecretError"
	// KlusterletReasonBootstrapUnauthorized: the hub rejects the bootstrap token.
	KlusterletReasonBootstrapUnauthorized = "BootstrapUnauthorized"
	// KlusterletReasonManagedClusterCreateFailed: the ManagedCluster could not be created.
	KlusterletReasonManagedClusterCreateFailed = "ManagedClusterCreateFailed"
	// KlusterletReasonCSRCreateFailed: the certificate request could not be created.
	KlusterletReasonCSRCreateFailed = "CSRCreateFailed"
	// KlusterletReasonCSRPending: the certificate request waits for the hub admin.
	KlusterletReasonCSRPending = "CSRPending"
	// KlusterletReasonCSRDenied: the hub denied the certificate request.
	KlusterletReasonCSRDenied = "CSRDenied"
	// KlusterletReasonHubAcceptancePending: the agent holds a certificate but the hub
	// has not accepted the cluster.
	KlusterletReasonHubAcceptancePending = "HubAcceptancePending"
	// KlusterletReasonManagedClusterMissing: the ManagedCluster is gone from the hub.
	KlusterletReasonManagedClusterMissing = "ManagedClusterMissing"
	// KlusterletReasonBootstrapSelected: the agent lost its hub and registers
	// with the next one of its bootstrap kubeconfigs.
	KlusterletReasonBootstrapSelected = "BootstrapSelected"
	// KlusterletReasonRegistrationFunctional: the registration agent works.
	KlusterletReasonRegistrationFunctional = "RegistrationFunctional"
	// KlusterletReasonNotJoined: the agent has not joined the hub yet.
	KlusterletReasonNotJoined = "NotJoined"
)
