package v1alpha1

import "testing"

func TestManagedByAddonManager(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{name: "no annotations", want: true},
		{name: "addon-manager", annotations: map[string]string{AddonLifecycleAnnotationKey: "addon-manager"}, want: true},
		{name: "empty value", annotations: map[string]string{AddonLifecycleAnnotationKey: ""}, want: true},
		{name: "self", annotations: map[string]string{AddonLifecycleAnnotationKey: "self"}},
		{name: "unknown value", annotations: map[string]string{AddonLifecycleAnnotationKey: "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ManagedByAddonManager(tt.annotations); got != tt.want {
				t.Errorf("ManagedByAddonManager(%v) = %v, want %v", tt.annotations, got, tt.want)
			}
		})
	}
}

func TestAgentInstallNamespace(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		status string
		want   string
	}{
		{name: "default", want: DefaultAddonInstallNamespace},
		{name: "spec", spec: "helloworld", want: "helloworld"},
		{name: "status wins", spec: "helloworld", status: "from-config", want: "from-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &ManagedClusterAddOn{
				Spec:   ManagedClusterAddOnSpec{InstallNamespace: tt.spec},
				Status: ManagedClusterAddOnStatus{Namespace: tt.status},
			}
			if got := a.AgentInstallNamespace(); got != tt.want {
				t.Errorf("AgentInstallNamespace() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsTemplateConfig(t *testing.T) {
	tests := []struct {
		gr   ConfigGroupResource
		want bool
	}{
		{gr: ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addontemplates"}, want: true},
		{gr: ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}},
		{gr: ConfigGroupResource{Group: "example.com", Resource: "addontemplates"}},
	}
	for _, tt := range tests {
		t.Run(tt.gr.Group+"/"+tt.gr.Resource, func(t *testing.T) {
			if got := tt.gr.IsTemplateConfig(); got != tt.want {
				t.Errorf("IsTemplateConfig() = %v, want %v", got, tt.want)
			}
		})
	}
}
