package v1alpha1

// Condition types of a ManagedClusterAddOn.
const (
	// ManagedClusterAddOnConditionAvailable reports whether the add-on agent is
	// running and healthy on the managed cluster.
	ManagedClusterAddOnConditionAvailable = "Available"
	// ManagedClusterAddOnConditionDegraded reports whether the agent provides
	// degraded service.
	ManagedClusterAddOnConditionDegraded = "Degraded"
	// ManagedClusterAddOnConditionConfigured reports whether the add-on's
	// configurations are resolved.
	ManagedClusterAddOnConditionConfigured = "Configured"
	// ManagedClusterAddOnConditionProgressing reports whether the add-on is
	// being installed or upgraded to new configurations.
	ManagedClusterAddOnConditionProgressing = "Progressing"
	// ManagedClusterAddOnManifestApplied reports whether the agent's manifests
	// were applied on the managed cluster.
	ManagedClusterAddOnManifestApplied = "ManifestApplied"
	// ManagedClusterAddOnHookManifestCompleted reports whether the pre-delete
	// hook finished.
	ManagedClusterAddOnHookManifestCompleted = "HookManifestCompleted"
	// ManagedClusterAddOnHostingManifestApplied reports whether the manifests
	// of a hosted add-on were applied on the hosting cluster.
	ManagedClusterAddOnHostingManifestApplied = "HostingManifestApplied"
	// ManagedClusterAddOnHostingClusterValidity reports whether the hosting
	// cluster of a hosted add-on is a valid managed cluster.
	ManagedClusterAddOnHostingClusterValidity = "HostingClusterValidity"
	// ManagedClusterAddOnRegistrationApplied reports whether the hub set up the
	// registrations and permissions of the agent.
	ManagedClusterAddOnRegistrationApplied = "RegistrationApplied"
	// ManagedClusterAddOnCertificateRotated reports the agent's last client
	// certificate rotation.
	ManagedClusterAddOnCertificateRotated = "ClusterCertificateRotated"
	// ManagedClusterAddOnTokenInfrastructureReady reports whether the hub
	// created the ServiceAccount and RBAC for the token driver.
	ManagedClusterAddOnTokenInfrastructureReady = "TokenInfrastructureReady"
	// ManagedClusterAddOnTokenRefreshed reports the agent's last token
	// refresh for the token driver.
	ManagedClusterAddOnTokenRefreshed = "TokenRefreshed"
	// ManagedClusterAddOnPodSecurity reports whether the Pods of a template
	// add-on's agent meet Pod Security level restricted in the namespaces
	// that enforce it on the managed cluster. It is this project's own
	// (OCM has none), and OCM's tools ignore it.
	ManagedClusterAddOnPodSecurity = "PodSecurity"
	// ManagedClusterAddOnImageRegistries reports whether the image mirrors
	// of the ManagedCluster's annotation
	// open-cluster-management.io/image-registries apply to a template
	// add-on's images; absent when the cluster has no such annotation. It is
	// this project's own (OCM has none), and OCM's tools ignore it.
	ManagedClusterAddOnImageRegistries = "ImageRegistries"
)

// Reasons of the ManagedClusterAddOn conditions.
const (
	// AddonAvailableReasonWorkNotFound: the add-on's ManifestWork does not exist.
	AddonAvailableReasonWorkNotFound = "WorkNotFound"
	// AddonAvailableReasonWorkApplyFailed: the ManifestWork could not be applied.
	AddonAvailableReasonWorkApplyFailed = "WorkApplyFailed"
	// AddonAvailableReasonWorkNotApplied: the ManifestWork is not applied yet.
	AddonAvailableReasonWorkNotApplied = "WorkNotApplied"
	// AddonAvailableReasonWorkApply: the ManifestWork is applied and available.
	AddonAvailableReasonWorkApply = "WorkApplied"
	// AddonAvailableReasonNoProbeResult: the health probes returned nothing.
	AddonAvailableReasonNoProbeResult = "NoProbeResult"
	// AddonAvailableReasonProbeUnavailable: a health probe failed.
	AddonAvailableReasonProbeUnavailable = "ProbeUnavailable"
	// AddonAvailableReasonProbeAvailable: the health probes passed.
	AddonAvailableReasonProbeAvailable = "ProbeAvailable"
	// AddonAvailableReasonLeaseUpdateStopped: the agent stopped renewing its lease.
	AddonAvailableReasonLeaseUpdateStopped = "ManagedClusterAddOnLeaseUpdateStopped"
	// AddonAvailableReasonLeaseNotFound: the agent's lease does not exist.
	AddonAvailableReasonLeaseNotFound = "ManagedClusterAddOnLeaseNotFound"
	// AddonAvailableReasonLeaseUpdated: the agent renews its lease.
	AddonAvailableReasonLeaseUpdated = "ManagedClusterAddOnLeaseUpdated"

	// ProgressingReasonProgressing: the add-on is being installed or upgraded.
	ProgressingReasonProgressing = "Progressing"
	// ProgressingReasonCompleted: the install or upgrade finished.
	ProgressingReasonCompleted = "Completed"
	// ProgressingReasonFailed: the install or upgrade failed.
	ProgressingReasonFailed = "Failed"
	// ProgressingReasonWaitingForCanary: the rollout waits for its canary clusters.
	ProgressingReasonWaitingForCanary = "WaitingForCanary"
	// ProgressingReasonConfigurationUnsupported: a configuration kind is not supported.
	ProgressingReasonConfigurationUnsupported = "ConfigurationUnsupported"
	// ProgressingReasonWaitingForManifestApplied: the ManifestWork is not applied yet.
	ProgressingReasonWaitingForManifestApplied = "WaitingForManifestApplied"
	// ProgressingReasonWaitingForHostingManifestApplied: the hosting ManifestWork
	// is not applied yet.
	ProgressingReasonWaitingForHostingManifestApplied = "WaitingForHostingManifestApplied"

	// ConfiguredReasonConfigured is the Configured=True reason.
	ConfiguredReasonConfigured = "ConfigurationsConfigured"
	// ConfiguredReasonNotConfigured is the Configured=False reason.
	ConfiguredReasonNotConfigured = "ConfigurationsNotConfigured"

	// HookManifestReasonCompleted is the HookManifestCompleted=True reason.
	HookManifestReasonCompleted = "HookManifestIsCompleted"
	// HookManifestReasonNotCompleted is the HookManifestCompleted=False reason.
	HookManifestReasonNotCompleted = "HookManifestIsNotCompleted"

	// RegistrationAppliedReasonNilRegistration: the add-on has no registration.
	RegistrationAppliedReasonNilRegistration = "NilRegistration"
	// RegistrationAppliedReasonSetPermissionFailed: granting the hub permissions failed.
	RegistrationAppliedReasonSetPermissionFailed = "SetPermissionFailed"
	// RegistrationAppliedReasonSetPermissionApplied: the hub permissions are granted.
	RegistrationAppliedReasonSetPermissionApplied = "SetPermissionApplied"
	// RegistrationAppliedReasonPermissionConfigPending: the permissions wait
	// for their configuration.
	RegistrationAppliedReasonPermissionConfigPending = "PermissionConfigPending"

	// TokenInfrastructureReasonReady: the hub created the ServiceAccount and
	// RBAC of the token driver; the message names the ServiceAccount's UID as
	// "ServiceAccount <cluster>/<name> (UID: <uid>) is ready".
	TokenInfrastructureReasonReady = "TokenInfrastructureReady"
	// TokenInfrastructureReasonApplyFailed: the hub could not write them.
	TokenInfrastructureReasonApplyFailed = "TokenInfrastructureApplyFailed"
	// TokenRefreshedReasonRefreshed: the agent wrote a new token.
	TokenRefreshedReasonRefreshed = "AddonTokenRefreshed"
	// TokenRefreshedReasonFailed: the agent could not obtain or write a token.
	TokenRefreshedReasonFailed = "TokenCreationFailed"

	// HostingClusterValidityReasonValid: the hosting cluster of a hosted
	// add-on is a managed cluster of the hub.
	HostingClusterValidityReasonValid = "HostingClusterValid"
	// HostingClusterValidityReasonInvalid: it is not.
	HostingClusterValidityReasonInvalid = "HostingClusterInvalid"
	// HostingClusterValidityReasonMismatch: the hosting cluster the add-on
	// names is not the one its cluster's agent reports in ClusterClaim
	// hosting-cluster.open-cluster-management.io.
	HostingClusterValidityReasonMismatch = "HostingClusterMismatch"
	// HostingClusterValidityReasonAutoDiscoveryPending: the add-on asks for
	// Hosted mode and its hosting cluster is not discovered yet.
	HostingClusterValidityReasonAutoDiscoveryPending = "HostingClusterAutoDiscoveryPending"
	// ManifestAppliedReasonManifestsApplied: the add-on's ManifestWorks are applied.
	ManifestAppliedReasonManifestsApplied = "AddonManifestApplied"
	// ManifestAppliedReasonManifestsApplyFailed: a ManifestWork of the add-on
	// is not applied on the managed cluster.
	ManifestAppliedReasonManifestsApplyFailed = "AddonManifestAppliedFailed"
	// ManifestAppliedReasonWorkApplyFailed: the hub could not write a
	// ManifestWork of the add-on.
	ManifestAppliedReasonWorkApplyFailed = "ManifestWorkApplyFailed"
	// ManifestAppliedReasonRenderFailed: the add-on's manifests could not be
	// rendered from its AddOnTemplate and AddOnDeploymentConfigs; the
	// ManifestWorks are left as they were.
	ManifestAppliedReasonRenderFailed = "AddonManifestRenderFailed"

	// PodSecurityReasonMeetsRestricted: every Pod template the agent runs in
	// a namespace that enforces Pod Security level restricted meets it.
	PodSecurityReasonMeetsRestricted = "MeetsRestricted"
	// PodSecurityReasonViolatesRestricted: a Pod template the agent runs in
	// a namespace that enforces Pod Security level restricted fails it; the
	// managed cluster refuses its Pods.
	PodSecurityReasonViolatesRestricted = "ViolatesRestricted"

	// ImageRegistriesReasonApplied: the mirrors of the cluster's annotation
	// apply to the agent's images, after those of its
	// AddOnDeploymentConfigs.
	ImageRegistriesReasonApplied = "ClusterImageRegistriesApplied"
	// ImageRegistriesReasonInvalid: the cluster's annotation is not a
	// valid document of mirrors; the agent is rendered without them.
	ImageRegistriesReasonInvalid = "InvalidClusterImageRegistries"
)

// Labels and annotations of add-on objects.
const (
	// AddonLabelKey on an object names the add-on it belongs to, for example
	// the add-on's CSRs and ManifestWorks.
	AddonLabelKey = "open-cluster-management.io/addon-name"
	// AddonNamespaceLabelKey on a ManifestWork of a hosted add-on, in its
	// hosting cluster's namespace, names the namespace of the
	// ManagedClusterAddOn it deploys (its managed cluster).
	AddonNamespaceLabelKey = "open-cluster-management.io/addon-namespace"
	// AddonTemplateLabelKey on objects of a template add-on names its AddOnTemplate.
	AddonTemplateLabelKey = "open-cluster-management.io/addon-template-name"
	// AddonPreDeleteHookLabelKey on a manifest marks it as a pre-delete hook
	// (a Job or Pod run before the add-on is removed).
	AddonPreDeleteHookLabelKey = "open-cluster-management.io/addon-pre-delete"
	// AddonPreDeleteHookAnnotationKey is the annotation form of AddonPreDeleteHookLabelKey.
	AddonPreDeleteHookAnnotationKey = "addon.open-cluster-management.io/addon-pre-delete"
	// TokenInfrastructureLabelKey labels the ServiceAccount and RBAC created
	// for the token driver.
	TokenInfrastructureLabelKey = "addon.open-cluster-management.io/token-infrastructure"
	// AddonNameLabelKey names the add-on of its token ServiceAccount and RBAC.
	AddonNameLabelKey = "addon.open-cluster-management.io/name"
	// InstallNamespaceLabelKey, set to "true" on a namespace of a managed
	// cluster, marks it as a namespace add-on agents are installed in: the
	// Klusterlet operator copies the TLS profile (ConfigMap ocm-tls-profile
	// of its own namespace) into it.
	InstallNamespaceLabelKey = "addon.open-cluster-management.io/namespace"

	// AddonLifecycleAnnotationKey on a ClusterManagementAddOn says who manages
	// the add-on's lifecycle: AddonLifecycleAddonManagerAnnotationValue (the
	// default when absent) or AddonLifecycleSelfManageAnnotationValue.
	AddonLifecycleAnnotationKey = "addon.open-cluster-management.io/lifecycle"
	// AddonLifecycleAddonManagerAnnotationValue: the hub's add-on manager
	// installs and configures the add-on.
	AddonLifecycleAddonManagerAnnotationValue = "addon-manager"
	// AddonLifecycleSelfManageAnnotationValue: the add-on's own controller does.
	AddonLifecycleSelfManageAnnotationValue = "self"

	// HostingClusterNameAnnotationKey on a ManagedClusterAddOn names the
	// cluster that hosts the agent of a hosted add-on.
	HostingClusterNameAnnotationKey = "addon.open-cluster-management.io/hosting-cluster-name"
	// InstallModeAnnotationKey on a ManagedClusterAddOn set to
	// InstallModeHosted asks for Hosted mode with the hosting cluster
	// discovered by the hub, when the ClusterManagementAddOn enables
	// spec.hostedModeAutoDiscovery.
	InstallModeAnnotationKey = "addon.open-cluster-management.io/install-mode"
	// InstallModeHosted is the value of InstallModeAnnotationKey that asks
	// for Hosted mode.
	InstallModeHosted = "Hosted"
	// HostingClusterNameManagedByAnnotationKey on a ManagedClusterAddOn
	// marks a HostingClusterNameAnnotationKey the hub discovered.
	HostingClusterNameManagedByAnnotationKey = "addon.open-cluster-management.io/hosting-cluster-name-managed-by"
	// HostingClusterNameManagedByAutoDiscoveryValue is the value of
	// HostingClusterNameManagedByAnnotationKey the hub sets.
	HostingClusterNameManagedByAutoDiscoveryValue = "auto-discovery"
	// DisableAddonAutomaticInstallationAnnotationKey on a ManagedClusterAddOn
	// stops the add-on manager from installing it automatically.
	DisableAddonAutomaticInstallationAnnotationKey = "addon.open-cluster-management.io/disable-automatic-installation"
	// DeletionOrphanAnnotationKey on a manifest keeps it on the managed cluster
	// when the add-on is removed.
	DeletionOrphanAnnotationKey = "addon.open-cluster-management.io/deletion-orphan"
	// HostedManifestLocationAnnotationKey on a manifest of a hosted add-on says
	// where it is applied: managed, hosting or none.
	HostedManifestLocationAnnotationKey = "addon.open-cluster-management.io/hosted-manifest-location"
	// HostedManifestLocationManagedValue applies the manifest on the managed cluster.
	HostedManifestLocationManagedValue = "managed"
	// HostedManifestLocationHostingValue applies the manifest on the hosting cluster.
	HostedManifestLocationHostingValue = "hosting"
	// HostedManifestLocationNoneValue applies the manifest nowhere.
	HostedManifestLocationNoneValue = "none"
	// InstallNamespaceAnnotation keeps spec.installNamespace when a
	// ManagedClusterAddOn is converted to v1beta1, which lacks the field.
	InstallNamespaceAnnotation = "addon.open-cluster-management.io/v1alpha1-install-namespace"
	// ClusterAnnotationPrefix begins the ManagedCluster annotations the
	// add-on manager copies to the ManagedClusterAddOns of add-ons whose
	// install strategy is not Manual.
	ClusterAnnotationPrefix = "addon.open-cluster-management.io/"
	// ClusterAnnotationsAnnotation on a ManagedClusterAddOn lists, sorted and
	// comma separated, the annotations the add-on manager copied to it from
	// its ManagedCluster, so that it removes them when the cluster drops them
	// and leaves alone those set on the ManagedClusterAddOn itself. Not an
	// OCM annotation.
	ClusterAnnotationsAnnotation = "addon.kubectl-ocm.io/cluster-annotations"
)

// Finalizers of ManagedClusterAddOns.
const (
	// AddonPreDeleteHookFinalizer holds the ManagedClusterAddOn until its
	// pre-delete hook completed.
	AddonPreDeleteHookFinalizer = "addon.open-cluster-management.io/addon-pre-delete"
	// AddonHostingPreDeleteHookFinalizer holds a hosted ManagedClusterAddOn
	// until its pre-delete hook on the hosting cluster completed.
	AddonHostingPreDeleteHookFinalizer = "addon.open-cluster-management.io/hosting-addon-pre-delete"
	// AddonHostingManifestFinalizer holds a hosted ManagedClusterAddOn until its
	// manifests on the hosting cluster are removed.
	AddonHostingManifestFinalizer = "addon.open-cluster-management.io/hosting-manifests-cleanup"

	// AddonDeprecatedPreDeleteHookFinalizer is the former name of AddonPreDeleteHookFinalizer.
	AddonDeprecatedPreDeleteHookFinalizer = "cluster.open-cluster-management.io/addon-pre-delete"
	// AddonDeprecatedHostingPreDeleteHookFinalizer is the former name of
	// AddonHostingPreDeleteHookFinalizer.
	AddonDeprecatedHostingPreDeleteHookFinalizer = "cluster.open-cluster-management.io/hosting-addon-pre-delete"
	// AddonDeprecatedHostingManifestFinalizer is the former name of AddonHostingManifestFinalizer.
	AddonDeprecatedHostingManifestFinalizer = "cluster.open-cluster-management.io/hosting-manifests-cleanup"
)

// Defaults and well-known values.
const (
	// InstallStrategyManual is the install strategy type where
	// ManagedClusterAddOns are created by hand.
	InstallStrategyManual = "Manual"
	// InstallStrategyPlacements is the install strategy type where the add-on
	// manager creates ManagedClusterAddOns for the clusters of placements.
	InstallStrategyPlacements = "Placements"

	// DefaultAddonInstallNamespace is the default namespace of add-on agents.
	DefaultAddonInstallNamespace = "open-cluster-management-agent-addon"
	// KubeAPIServerClientSignerName is the signer of add-on credentials for the
	// hub's kube-apiserver.
	KubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client"
	// KubeClientDriverCSR obtains the kube client credential with a CSR.
	KubeClientDriverCSR = "csr"
	// KubeClientDriverToken obtains the kube client credential as a ServiceAccount token.
	KubeClientDriverToken = "token"
	// AddOnDeploymentConfigResource is the resource name of AddOnDeploymentConfigs
	// in configuration references.
	AddOnDeploymentConfigResource = "addondeploymentconfigs"
	// AddOnTemplateResource is the resource name of AddOnTemplates in
	// configuration references.
	AddOnTemplateResource = "addontemplates"
)
