package v1

import "slices"

// AgentNamespace returns the namespace the agent runs in on the managed
// cluster: spec.namespace, or open-cluster-management-agent when unset.
func (k *Klusterlet) AgentNamespace() string {
	if k.Spec.Namespace == "" {
		return DefaultAgentNamespace
	}
	return k.Spec.Namespace
}

// AddonNamespace returns the namespace of the add-on agents: the agent
// namespace followed by -addon.
func (k *Klusterlet) AddonNamespace() string {
	return k.AgentNamespace() + AddonNamespaceSuffix
}

// Mode returns the agent's install mode, Default when unset.
func (k *Klusterlet) Mode() InstallMode {
	if k.Spec.DeployOption.Mode == "" {
		return InstallModeDefault
	}
	return k.Spec.DeployOption.Mode
}

// IsHosted reports whether the mode runs the components on a separate
// management cluster.
func (m InstallMode) IsHosted() bool {
	return m == InstallModeHosted || m == InstallModeSingletonHosted
}

// FeatureGateEnabled returns whether the feature is enabled by gates and
// whether the gates mention it at all; the last mention wins.
func FeatureGateEnabled(gates []FeatureGate, feature string) (enabled, set bool) {
	for _, g := range gates {
		if g.Feature == feature {
			enabled, set = g.Mode == FeatureGateModeTypeEnable, true
		}
	}
	return enabled, set
}

// AutoApprovedIdentities returns the bootstrap identities whose first-join
// requests the hub approves, and whose clusters it accepts, automatically
// (feature ManagedClusterAutoApproval): autoApproveUsers, then the
// autoApprovedIdentities of the csr registration driver, each once. A nil
// configuration names none.
func (c *RegistrationHubConfiguration) AutoApprovedIdentities() []string {
	if c == nil {
		return nil
	}
	ids := slices.Clone(c.AutoApproveUsers)
	for _, d := range c.RegistrationDrivers {
		if (d.AuthType == "" || d.AuthType == CSRAuthType) && d.CSR != nil {
			ids = append(ids, d.CSR.AutoApprovedIdentities...)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// BootstrapKubeconfigSecrets names the Secrets holding the bootstrap
// kubeconfigs of the hubs k names, in order of preference:
// bootstrapKubeConfigs' Secrets with type LocalSecrets, else
// bootstrap-hub-kubeconfig alone.
func (k *Klusterlet) BootstrapKubeconfigSecrets() []string {
	var names []string
	if rc := k.Spec.RegistrationConfiguration; rc != nil && rc.BootstrapKubeConfigs.Type == LocalSecrets && rc.BootstrapKubeConfigs.LocalSecrets != nil {
		for _, s := range rc.BootstrapKubeConfigs.LocalSecrets.KubeConfigSecrets {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		names = []string{BootstrapHubKubeConfigSecret}
	}
	return names
}

// HubConnectionTimeoutSeconds is how long the agent of k tolerates losing
// its hub before it moves to the next one: bootstrapKubeConfigs'
// hubConnectionTimeoutSeconds, else DefaultHubConnectionTimeoutSeconds.
func (k *Klusterlet) HubConnectionTimeoutSeconds() int32 {
	if rc := k.Spec.RegistrationConfiguration; rc != nil && rc.BootstrapKubeConfigs.LocalSecrets != nil && rc.BootstrapKubeConfigs.LocalSecrets.HubConnectionTimeoutSeconds > 0 {
		return rc.BootstrapKubeConfigs.LocalSecrets.HubConnectionTimeoutSeconds
	}
	return DefaultHubConnectionTimeoutSeconds
}
