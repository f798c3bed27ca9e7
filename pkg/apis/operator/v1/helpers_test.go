package v1

import (
	"slices"
	"testing"
)

func TestKlusterletNamespacesAndMode(t *testing.T) {
	tests := []struct {
		name        string
		spec        KlusterletSpec
		wantAgent   string
		wantAddon   string
		wantMode    InstallMode
		wantsHosted bool
	}{
		{name: "defaults", wantAgent: "open-cluster-management-agent",
			wantAddon: "open-cluster-management-agent-addon", wantMode: InstallModeDefault},
		{name: "custom namespace, singleton", spec: KlusterletSpec{Namespace: "open-cluster-management-c1",
			DeployOption: KlusterletDeployOption{Mode: InstallModeSingleton}},
			wantAgent: "open-cluster-management-c1", wantAddon: "open-cluster-management-c1-addon", wantMode: InstallModeSingleton},
		{name: "hosted", spec: KlusterletSpec{DeployOption: KlusterletDeployOption{Mode: InstallModeHosted}},
			wantAgent: "open-cluster-management-agent", wantAddon: "open-cluster-management-agent-addon",
			wantMode: InstallModeHosted, wantsHosted: true},
		{name: "singleton hosted", spec: KlusterletSpec{DeployOption: KlusterletDeployOption{Mode: InstallModeSingletonHosted}},
			wantAgent: "open-cluster-management-agent", wantAddon: "open-cluster-management-agent-addon",
			wantMode: InstallModeSingletonHosted, wantsHosted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &Klusterlet{Spec: tt.spec}
			if got := k.AgentNamespace(); got != tt.wantAgent {
				t.Errorf("AgentNamespace() = %q, want %q", got, tt.wantAgent)
			}
			if got := k.AddonNamespace(); got != tt.wantAddon {
				t.Errorf("AddonNamespace() = %q, want %q", got, tt.wantAddon)
			}
			if got := k.Mode(); got != tt.wantMode {
				t.Errorf("Mode() = %q, want %q", got, tt.wantMode)
			}
			if got := k.Mode().IsHosted(); got != tt.wantsHosted {
				t.Errorf("IsHosted() = %v, want %v", got, tt.wantsHosted)
			}
		})
	}
}

func TestFeatureGateEnabled(t *testing.T) {
	gates := []FeatureGate{
		{Feature: "ManagedClusterAutoApproval", Mode: FeatureGateModeTypeEnable},
		{Feature: "ClusterClaim", Mode: FeatureGateModeTypeDisable},
		{Feature: "Flip", Mode: FeatureGateModeTypeEnable},
		{Feature: "Flip", Mode: FeatureGateModeTypeDisable},
		{Feature: "NoMode"},
	}
	tests := []struct {
		feature     string
		wantEnabled bool
		wantSet     bool
	}{
		{feature: "ManagedClusterAutoApproval", wantEnabled: true, wantSet: true},
		{feature: "ClusterClaim", wantSet: true},
		{feature: "Flip", wantSet: true},
		{feature: "NoMode", wantSet: true},
		{feature: "Missing"},
	}
	for _, tt := range tests {
		t.Run(tt.feature, func(t *testing.T) {
			enabled, set := FeatureGateEnabled(gates, tt.feature)
			if enabled != tt.wantEnabled || set != tt.wantSet {
				t.Errorf("FeatureGateEnabled(%q) = %v, %v; want %v, %v", tt.feature, enabled, set, tt.wantEnabled, tt.wantSet)
			}
		})
	}
}

func TestAutoApprovedIdentities(t *testing.T) {
	tests := []struct {
		name string
		c    *RegistrationHubConfiguration
		want []string
	}{
		{name: "none", c: nil},
		{name: "autoApproveUsers", c: &RegistrationHubConfiguration{AutoApproveUsers: []string{"b", "a"}}, want: []string{"a", "b"}},
		{name: "csr driver, once each", c: &RegistrationHubConfiguration{AutoApproveUsers: []string{"a"}, RegistrationDrivers: []RegistrationDriverHub{
			{AuthType: CSRAuthType, CSR: &CSRConfig{AutoApprovedIdentities: []string{"c", "a"}}},
			{AuthType: AwsIrsaAuthType, AwsIrsa: &AwsIrsaConfig{AutoApprovedIdentities: []string{"arn:aws:iam::*"}}},
		}}, want: []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.AutoApprovedIdentities(); !slices.Equal(got, tt.want) {
				t.Errorf("AutoApprovedIdentities() = %v, want %v", got, tt.want)
			}
		})
	}
}
