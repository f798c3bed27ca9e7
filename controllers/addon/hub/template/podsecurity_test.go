package template

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// restrictedDeployment is agentDeployment with the securityContext that
// meets Pod Security level restricted.
const restrictedDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello-agent
  namespace: open-cluster-management-agent-addon
spec:
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: agent
        image: quay.io/ocm/hello:v1
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

// hostJob is a pre-delete hook Job that uses the host's network.
const hostJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: cleanup
  namespace: open-cluster-management-agent-addon
  labels: {open-cluster-management.io/addon-pre-delete: ""}
spec:
  template:
    spec:
      hostNetwork: true
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: cleanup
        image: quay.io/ocm/hello:v1
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

// namespace returns a Namespace manifest with the enforce label, when not
// empty.
func namespace(name, enforce string) string {
	labels := ""
	if enforce != "" {
		labels = "\n  labels: {pod-security.kubernetes.io/enforce: " + enforce + "}"
	}
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + labels
}

func TestPodSecurity(t *testing.T) {
	inOther := strings.Replace(agentDeployment, "namespace: open-cluster-management-agent-addon", "namespace: other", 1)
	tests := []struct {
		name      string
		manifests []string
		configs   []*addonv1alpha1.AddOnDeploymentConfig
		// enforced: the cluster's agent reports that the default install
		// namespace enforces restricted.
		enforced bool
		checked  []string
		want     []string // one entry per violation: strings its text holds
	}{
		{name: "a restricted agent in the default install namespace", manifests: []string{restrictedDeployment},
			enforced: true, checked: []string{addonv1alpha1.DefaultAddonInstallNamespace}},
		{name: "an agent without a securityContext in the default install namespace", manifests: []string{agentDeployment},
			enforced: true, checked: []string{addonv1alpha1.DefaultAddonInstallNamespace},
			want: []string{`Deployment open-cluster-management-agent-addon/hello-agent violates PodSecurity "restricted:latest"`,
				`allowPrivilegeEscalation != false (container "agent" must set securityContext.allowPrivilegeEscalation=false)`,
				"unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"}},
		{name: "the default install namespace that only warns is left to the cluster", manifests: []string{agentDeployment}},
		{name: "a hook Job on the host network", manifests: []string{restrictedDeployment, hostJob},
			enforced: true, checked: []string{addonv1alpha1.DefaultAddonInstallNamespace},
			want: []string{"Job open-cluster-management-agent-addon/cleanup", "host namespaces (hostNetwork=true)"}},
		{name: "a namespace the hub knows nothing of is left to the cluster", manifests: []string{inOther}},
		{name: "the template's Namespace enforcing restricted is checked", manifests: []string{namespace("other", "restricted"), inOther},
			checked: []string{"other"}, want: []string{"Deployment other/hello-agent", "seccompProfile"}},
		{name: "the template's Namespace enforcing baseline is not", manifests: []string{namespace("other", "baseline"), inOther}},
		{name: "the template's Namespace may relax the default install namespace",
			manifests: []string{namespace(addonv1alpha1.DefaultAddonInstallNamespace, "privileged"), agentDeployment}, enforced: true},
		{name: "moved by agentInstallNamespace with an unlabeled Namespace, no longer checked",
			manifests: []string{namespace(addonv1alpha1.DefaultAddonInstallNamespace, ""), agentDeployment},
			configs:   []*addonv1alpha1.AddOnDeploymentConfig{adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "agents"})}},
		{name: "moved by agentInstallNamespace with a Namespace enforcing restricted, still checked",
			manifests: []string{namespace(addonv1alpha1.DefaultAddonInstallNamespace, "restricted"), agentDeployment},
			configs:   []*addonv1alpha1.AddOnDeploymentConfig{adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "agents"})},
			checked:   []string{"agents"}, want: []string{"Deployment agents/hello-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newTemplate(t, tt.manifests...).input(tt.configs...)
			in.AddonNamespaceEnforced = tt.enforced
			a := mustRender(t, in)
			assert.Equal(t, tt.checked, a.PodSecurityChecked)
			if !assert.Len(t, a.PodSecurityViolations, min(len(tt.want), 1), "violations: %v", a.PodSecurityViolations) || len(tt.want) == 0 {
				return
			}
			text := a.PodSecurityViolations[0].String()
			for _, w := range tt.want {
				assert.Contains(t, text, w)
			}
		})
	}
}
