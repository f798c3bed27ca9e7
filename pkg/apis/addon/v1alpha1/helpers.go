package v1alpha1

// ManagedByAddonManager reports whether the hub's add-on manager manages the
// lifecycle of the add-on of a ClusterManagementAddOn with these annotations:
// the lifecycle annotation is absent, empty or addon-manager.
func ManagedByAddonManager(annotations map[string]string) bool {
	switch annotations[AddonLifecycleAnnotationKey] {
	case "", AddonLifecycleAddonManagerAnnotationValue:
		return true
	default:
		return false
	}
}

// AgentInstallNamespace returns the namespace the add-on agent is installed in
// on the managed cluster, as far as the ManagedClusterAddOn alone says:
// status.namespace once the hub has set it, else spec.installNamespace, else
// the default open-cluster-management-agent-addon. An AddOnDeploymentConfig's
// agentInstallNamespace, resolved by the add-on manager, ends up in status.namespace.
func (a *ManagedClusterAddOn) AgentInstallNamespace() string {
	switch {
	case a.Status.Namespace != "":
		return a.Status.Namespace
	case a.Spec.InstallNamespace != "":
		return a.Spec.InstallNamespace
	default:
		return DefaultAddonInstallNamespace
	}
}

// IsTemplateConfig reports whether the configuration kind is AddOnTemplate.
func (c ConfigGroupResource) IsTemplateConfig() bool {
	return c.Group == GroupVersion.Group && c.Resource == AddOnTemplateResource
}
