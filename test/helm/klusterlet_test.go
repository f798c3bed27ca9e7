package helm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// TestKlusterletChart checks that the klusterlet chart renders what
// `kubectl ocm join` writes: the Klusterlet operator, the agent's namespace,
// the bootstrap kubeconfig Secret and the Klusterlet
// (config.KlusterletInstallObjects), with the values join passes for its
// flags and the bootstrap kubeconfig join writes.
func TestKlusterletChart(t *testing.T) {
	bootstrap, err := kubeconfig.ForToken("https://hub.example.com:6443", []byte("CA"), "token")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values map[string]any
		op     config.KlusterletOperatorValues
		want   config.AgentValues
	}{{
		name:   "default values",
		values: map[string]any{"klusterlet": map[string]any{"clusterName": "cluster1"}},
		op:     config.KlusterletOperatorValues{Image: defaultImage(t, "klusterlet")},
		want:   config.AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: bootstrap, Image: defaultImage(t, "klusterlet")},
	}, {
		name: "every value",
		values: map[string]any{
			"images": map[string]any{"registry": "registry.example.com/ocm", "tag": "v1.2.3"},
			"klusterlet": map[string]any{
				"clusterName":        "edge-7",
				"namespace":          "ocm-agent",
				"mode":               "Singleton",
				"externalServerURLs": []map[string]string{{"url": "https://edge-7.example.com:6443"}, {"url": "https://10.0.0.7:6443"}},
				"registrationConfiguration": map[string]any{
					"clientCertExpirationSeconds":       31536000,
					"addOnKubeClientRegistrationDriver": map[string]any{"authType": "token", "token": map[string]any{"expirationSeconds": 7200}},
				},
				"workConfiguration":          map[string]any{"hubKubeAPIQPS": 20, "hubKubeAPIBurst": 40},
				"tlsProfile":                 map[string]any{"minTLSVersion": "VersionTLS13", "cipherSuites": []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}},
				"networkPolicyConfiguration": map[string]any{"monitoringNamespace": "monitoring"},
			},
			"nodeSelector": map[string]string{"node-role.kubernetes.io/control-plane": ""},
			"tolerations":  []map[string]any{{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
			"resources":    map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]string{"memory": "1Gi"}},
			"operator": map[string]any{
				"nodeSelector": map[string]string{"node-role.kubernetes.io/control-plane": ""},
				"tolerations":  []map[string]any{{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
				"resources":    map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]string{"memory": "1Gi"}},
			},
		},
		op: config.KlusterletOperatorValues{Image: "registry.example.com/ocm/ocm-controller:v1.2.3", OperatorPod: config.OperatorPod{Scheduling: testScheduling()}},
		want: config.AgentValues{
			ClusterName: "edge-7", Image: "registry.example.com/ocm/ocm-controller:v1.2.3", AgentNamespace: "ocm-agent",
			BootstrapKubeconfig: bootstrap, Mode: "Singleton",
			ExternalServerURLs:              []string{"https://edge-7.example.com:6443", "https://10.0.0.7:6443"},
			ClientCertExpirationSeconds:     31536000,
			AddonKubeClientRegistrationAuth: "token", AddonTokenExpirationSeconds: 7200,
			HubKubeAPIQPS: 20, HubKubeAPIBurst: 40,
			TLSProfile:    &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS13", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}},
			NetworkPolicy: &config.AgentNetworkPolicy{MonitoringNamespace: "monitoring"},
			Scheduling:    testScheduling(),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := helmTemplate(t, "klusterlet", tt.values, map[string]string{"bootstrapHubKubeConfig": string(bootstrap)})
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			want, _, err := config.KlusterletInstallObjects(tt.op, tt.want, false)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, out, want)
		})
	}
}

// TestKlusterletChartRejects checks that the chart names what it lacks or
// does not support.
func TestKlusterletChartRejects(t *testing.T) {
	kubeconfigFile := map[string]string{"bootstrapHubKubeConfig": "apiVersion: v1\nkind: Config\n"}
	tests := []struct {
		name   string
		values map[string]any
		files  map[string]string
		want   []string
	}{
		{name: "no cluster name", files: kubeconfigFile, want: []string{"klusterlet.clusterName"}},
		{name: "no bootstrap kubeconfig", values: map[string]any{"klusterlet": map[string]any{"clusterName": "cluster1"}}, want: []string{"bootstrapHubKubeConfig"}},
		{name: "hosted mode", values: map[string]any{"klusterlet": map[string]any{"clusterName": "cluster1", "mode": "Hosted"}}, files: kubeconfigFile, want: []string{"Hosted", "join --mode hosted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := helmTemplate(t, "klusterlet", tt.values, tt.files)
			require.Error(t, err, "helm template")
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}
