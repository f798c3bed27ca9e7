package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// TestKlusterletFlags checks each row of agentFlags: the Klusterlet field
// it reads becomes the agent's flag, and an unset field leaves the flag
// out. Every row needs a case here.
func TestKlusterletFlags(t *testing.T) {
	reg := func(rc operatorv1.RegistrationConfiguration) func(s *operatorv1.KlusterletSpec) {
		return func(s *operatorv1.KlusterletSpec) { s.RegistrationConfiguration = &rc }
	}
	work := func(wc operatorv1.WorkAgentConfiguration) func(s *operatorv1.KlusterletSpec) {
		return func(s *operatorv1.KlusterletSpec) { s.WorkConfiguration = &wc }
	}
	secrets := func(timeout int32, names ...string) operatorv1.BootstrapKubeConfigs {
		l := &operatorv1.LocalSecretsConfig{HubConnectionTimeoutSeconds: timeout}
		for _, n := range names {
			l.KubeConfigSecrets = append(l.KubeConfigSecrets, operatorv1.KubeConfigSecret{Name: n})
		}
		return operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets, LocalSecrets: l}
	}
	tests := []struct {
		name string
		edit func(s *operatorv1.KlusterletSpec)
		want []string
	}{
		{name: "nothing set", edit: func(*operatorv1.KlusterletSpec) {}, want: []string{}},
		{name: "client certificate lifetime", edit: reg(operatorv1.RegistrationConfiguration{ClientCertExpirationSeconds: 3600}),
			want: []string{"--client-cert-expiration-seconds=3600"}},
		{name: "csr registration is the default", edit: reg(operatorv1.RegistrationConfiguration{RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "csr"}}), want: []string{}},
		{name: "token registration", edit: reg(operatorv1.RegistrationConfiguration{RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "token"}}),
			want: []string{"--registration-auth=token"}},
		{name: "add-on tokens", edit: reg(operatorv1.RegistrationConfiguration{AddOnKubeClientRegistrationDriver: &operatorv1.AddOnRegistrationDriver{
			AuthType: "token", Token: &operatorv1.TokenConfig{ExpirationSeconds: 7200}}}),
			want: []string{"--addon-kubeclient-registration-auth=token", "--addon-token-expiration-seconds=7200"}},
		{name: "add-on csr ignores the token lifetime", edit: reg(operatorv1.RegistrationConfiguration{AddOnKubeClientRegistrationDriver: &operatorv1.AddOnRegistrationDriver{
			AuthType: "csr", Token: &operatorv1.TokenConfig{ExpirationSeconds: 7200}}}), want: []string{}},
		{name: "external server URLs", edit: func(s *operatorv1.KlusterletSpec) {
			s.ExternalServerURLs = []operatorv1.ServerURL{{URL: "https://a:6443"}, {URL: "https://b:6443"}}
		}, want: []string{"--spoke-external-server-urls=https://a:6443,https://b:6443"}},
		{name: "feature gates of both sections", edit: func(s *operatorv1.KlusterletSpec) {
			reg(operatorv1.RegistrationConfiguration{FeatureGates: []operatorv1.FeatureGate{{Feature: "ClusterClaim", Mode: operatorv1.FeatureGateModeTypeDisable}}})(s)
			work(operatorv1.WorkAgentConfiguration{FeatureGates: []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: operatorv1.FeatureGateModeTypeDisable}}})(s)
		}, want: []string{"--feature-gates=AddonManagement=false,ClusterClaim=false"}},
		{name: "the default bootstrap Secret alone", edit: reg(operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: secrets(300, "bootstrap-hub-kubeconfig")}), want: []string{}},
		{name: "another bootstrap Secret", edit: reg(operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: secrets(300, "hub-a")}),
			want: []string{"--bootstrap-kubeconfig-secret=hub-a"}},
		{name: "standby hubs", edit: reg(operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: secrets(300, "bootstrap-hub-kubeconfig", "hub-b")}),
			want: []string{"--bootstrap-kubeconfig-secret=bootstrap-hub-kubeconfig", "--bootstrap-kubeconfig-secret=hub-b", "--hub-connection-timeout=300s"}},
		{name: "cluster status period", edit: reg(operatorv1.RegistrationConfiguration{ClusterHealthCheckPeriod: &metav1.Duration{Duration: 30 * time.Second}}),
			want: []string{"--cluster-healthcheck-period=30s"}},
		{name: "registration client limits", edit: reg(operatorv1.RegistrationConfiguration{KubeAPIQPS: 10, KubeAPIBurst: 20}),
			want: []string{"--kube-api-qps=10", "--kube-api-burst=20"}},
		{name: "work client limits", edit: work(operatorv1.WorkAgentConfiguration{KubeAPIQPS: 30, KubeAPIBurst: 60, HubKubeAPIQPS: 20, HubKubeAPIBurst: 40}),
			want: []string{"--work-kube-api-qps=30", "--work-kube-api-burst=60", "--hub-kube-api-qps=20", "--hub-kube-api-burst=40"}},
		{name: "work intervals", edit: work(operatorv1.WorkAgentConfiguration{StatusSyncInterval: &metav1.Duration{Duration: 5 * time.Second},
			AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: time.Hour}}),
			want: []string{"--status-sync-interval=5s", "--appliedmanifestwork-eviction-grace-period=1h0m0s"}},
		{name: "zero intervals", edit: work(operatorv1.WorkAgentConfiguration{StatusSyncInterval: &metav1.Duration{}}), want: []string{}},
		{name: "workers", edit: work(operatorv1.WorkAgentConfiguration{Workers: &operatorv1.WorkAgentWorkers{ManifestWorks: 3, AppliedManifestWorkFinalize: 5}}),
			want: []string{"--manifestwork-agent-workers=3", "--appliedmanifestwork-finalize-controller-workers=5"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := klusterlet(tt.edit)
			got := klusterletFlags(&k.Spec)
			assert.Equal(t, tt.want, got)
			for _, f := range got {
				flag, _, _ := strings.Cut(f, "=")
				seen[flag] = true
			}
		})
	}
	for _, f := range agentFlags {
		assert.True(t, seen[f.flag], "no case of TestKlusterletFlags sets %s (%s)", f.field, f.flag)
	}
}

// TestJoinValuesRenderTheOperatorsAgent checks that the agent rendered from
// values as join sets them is the one the operator renders from the
// Klusterlet those values write.
func TestJoinValuesRenderTheOperatorsAgent(t *testing.T) {
	join := goldenJoinValues()
	fromJoin := agentArgs(t, join)
	objs, err := RenderFile(klusterletFile, join.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	k := &operatorv1.Klusterlet{}
	if err := fromUnstructured(objs, k); err != nil {
		t.Fatal(err)
	}
	v, _, err := AgentValuesFromKlusterlet(k, join.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	v.TLSValues = join.TLSValues // the operator's own profile
	assert.Equal(t, fromJoin, agentArgs(t, v))
	assert.Contains(t, fromJoin, "--hub-kube-api-qps=20", "the Klusterlet's settings reach the agent")
}
