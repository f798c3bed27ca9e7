package config

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

var update = flag.Bool("update", false, "rewrite the files under testdata/agent with what the agent manifests render")

// goldenJoinValues are values as `kubectl ocm join` sets them, with every
// field it may set.
func goldenJoinValues() AgentValues {
	return AgentValues{
		ClusterName: "cluster1", Image: "example.com/ocm-controller:v1", BootstrapKubeconfig: []byte("bootstrap"),
		ExternalServerURLs:          []string{"https://a:6443", "https://b:6443"},
		ClientCertExpirationSeconds: 7200, RegistrationAuth: "token",
		AddonKubeClientRegistrationAuth: "token", AddonTokenExpirationSeconds: 3600,
		HubKubeAPIQPS: 20, HubKubeAPIBurst: 40, ManifestWorkWorkers: 3, AppliedWorkWorkers: 5,
		PriorityClassName: "system-cluster-critical",
		HostAliases:       []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"hub.example.com"}}},
		TLSProfile:        &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS13"},
		NetworkPolicy:     &AgentNetworkPolicy{MonitoringNamespace: "monitoring"},
		LeaderElection:    LeaderElection{Timings: leaderelect.Timings{LeaseDuration: time.Minute, RetryPeriod: 5 * time.Second}},
		Scheduling: Scheduling{
			NodeSelector: map[string]string{"role": "infra"},
			Tolerations:  []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists}},
			Resources:    &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		},
		TLSValues: TLSValues{TLS: tlsprofile.Settings{MinVersion: tlsprofile.Setting{Value: "VersionTLS13"}}},
	}
}

// goldenKlusterlet is a Klusterlet with every field the operator reads.
func goldenKlusterlet(mode operatorv1.InstallMode) *operatorv1.Klusterlet {
	k := klusterlet(func(s *operatorv1.KlusterletSpec) {
		s.DeployOption.Mode = mode
		s.ExternalServerURLs = []operatorv1.ServerURL{{URL: "https://a:6443"}}
		s.PriorityClassName = "system-node-critical"
		s.HubApiServerHostAlias = &operatorv1.HubApiServerHostAlias{IP: "10.0.0.2", Hostname: "hub.example.com"}
		s.NodePlacement = operatorv1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}}
		s.ResourceRequirement = &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassBestEffort}
		s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{
			ClientCertExpirationSeconds: 3600, KubeAPIQPS: 10, KubeAPIBurst: 20,
			FeatureGates:       []operatorv1.FeatureGate{{Feature: "MultipleHubs", Mode: operatorv1.FeatureGateModeTypeEnable}},
			RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "token"},
			BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets, LocalSecrets: &operatorv1.LocalSecretsConfig{
				KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "bootstrap-hub-kubeconfig"}, {Name: "hub-b"}}, HubConnectionTimeoutSeconds: 300}},
			AddOnKubeClientRegistrationDriver: &operatorv1.AddOnRegistrationDriver{AuthType: "token", Token: &operatorv1.TokenConfig{ExpirationSeconds: 7200}},
		}
		s.WorkConfiguration = &operatorv1.WorkAgentConfiguration{
			FeatureGates:  []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: operatorv1.FeatureGateModeTypeDisable}},
			HubKubeAPIQPS: 20, HubKubeAPIBurst: 40, KubeAPIQPS: 30, KubeAPIBurst: 60,
			StatusSyncInterval:                     &metav1.Duration{Duration: 5 * time.Second},
			AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: time.Hour},
			Workers:                                &operatorv1.WorkAgentWorkers{ManifestWorks: 3, AppliedManifestWorkFinalize: 5},
		}
		s.LeaderElection = &operatorv1.LeaderElectionConfiguration{RetryPeriod: &metav1.Duration{Duration: time.Second}}
		s.TLSProfile = &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS12", CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}}
	})
	if mode.IsHosted() {
		k.Name = HostedKlusterletName(k.Spec.ClusterName)
	}
	return k
}

// TestAgentManifestsGolden renders the agent manifests of both modes, for
// values as join sets them and as the operator reads them from a
// Klusterlet, and compares the objects (CRDs and generated roles named
// only) with the files under
// testdata/agent; go test ./config -run TestAgentManifestsGolden -update
// rewrites them.
func TestAgentManifestsGolden(t *testing.T) {
	fromKlusterlet := func(mode operatorv1.InstallMode) func(t *testing.T) AgentValues {
		return func(t *testing.T) AgentValues {
			v, _, err := AgentValuesFromKlusterlet(goldenKlusterlet(mode), []byte("bootstrap"))
			require.NoError(t, err)
			return v
		}
	}
	tests := []struct {
		name   string
		hosted bool
		values func(t *testing.T) AgentValues
	}{
		{name: "default-minimal", values: func(*testing.T) AgentValues {
			return AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("bootstrap")}
		}},
		{name: "default-join", values: func(*testing.T) AgentValues { return goldenJoinValues() }},
		{name: "default-klusterlet", values: fromKlusterlet(operatorv1.InstallModeDefault)},
		{name: "singleton-klusterlet", values: fromKlusterlet(operatorv1.InstallModeSingleton)},
		{name: "hosted-minimal", hosted: true, values: func(*testing.T) AgentValues {
			return AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("bootstrap"), ManagedKubeconfig: []byte("managed")}
		}},
		{name: "hosted-join", hosted: true, values: func(*testing.T) AgentValues {
			v := goldenJoinValues()
			v.ManagedKubeconfig = []byte("managed")
			return v
		}},
		{name: "hosted-klusterlet", hosted: true, values: fromKlusterlet(operatorv1.InstallModeHosted)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.values(t)
			var objs, managed []*unstructured.Unstructured
			var err error
			if tt.hosted {
				objs, managed, err = HostedAgentObjects(v)
			} else {
				objs, err = AgentObjects(v)
			}
			require.NoError(t, err)
			var docs []string
			for _, obj := range append(objs, managed...) {
				switch obj.GetKind() {
				case "CustomResourceDefinition":
					docs = append(docs, "# CustomResourceDefinition "+obj.GetName()+"\n")
					continue
				case "ClusterRole", "Role":
					// Those of the agent on its managed cluster are generated
					// from RBAC markers (TestBindingsReferToRenderedRoles).
					if !tt.hosted {
						docs = append(docs, "# "+obj.GetKind()+" "+obj.GetName()+"\n")
						continue
					}
				}
				data, err := yaml.Marshal(obj.Object)
				require.NoError(t, err)
				docs = append(docs, string(data))
			}
			got := strings.Join(docs, "---\n")
			file := filepath.Join("testdata", "agent", tt.name+".yaml")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test ./config -run TestAgentManifestsGolden -update to write it")
			if diff := firstDifference(string(want), got); diff != "" {
				t.Errorf("the agent manifests render differently from %s (go test ./config -run TestAgentManifestsGolden -update rewrites it): %s", file, diff)
			}
		})
	}
}

// firstDifference names the first line where got differs from want, with
// the lines around it; empty when they are equal.
func firstDifference(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	line := func(l []string, n int) string {
		if n < len(l) {
			return l[n]
		}
		return "(end)"
	}
	return fmt.Sprintf("line %d: want %q, got %q (after %q)", i+1, line(w, i), line(g, i), line(g, i-1))
}
