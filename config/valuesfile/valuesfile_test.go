package valuesfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// writeFile writes content to a file of the test and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadHub checks that the hub chart's values decode to what hub init
// applies.
func TestReadHub(t *testing.T) {
	path := writeFile(t, `
images: {registry: registry.example.com/ocm, tag: v1.2.3}
imagePullSecrets: [mirror]
nodeSelector: {infra: "true"}
tolerations: [{key: infra, operator: Exists}]
resources: {requests: {cpu: 100m}}
priorityClassName: high
podSecurityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
extraVolumes: [{name: ca, configMap: {name: ca}}]
extraVolumeMounts: [{name: ca, mountPath: /ca}]
clusterManager:
  registrationConfiguration: {autoApproveUsers: [alice]}
  tlsProfile: {minTLSVersion: VersionTLS13}
  networkPolicyConfiguration: {}
conversionWebhookURL: https://127.0.0.1:9443/convert
`)
	h, err := ReadHub("--values-file", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Images.Image("registry.example.com/ocm"); got != "registry.example.com/ocm/ocm-controller:v1.2.3" {
		t.Errorf("image %q", got)
	}
	if h.ClusterManager.NetworkPolicyConfiguration == nil {
		t.Error("networkPolicyConfiguration {} read as unset, want set")
	}
	pod := h.OperatorPod()
	if pod.ImagePullSecrets[0] != "mirror" || pod.PriorityClassName != "high" || *pod.PodSecurityContext.RunAsUser != 1000 ||
		pod.ExtraVolumes[0].ConfigMap.Name != "ca" || pod.ExtraVolumeMounts[0].MountPath != "/ca" || pod.NodeSelector["infra"] != "true" {
		t.Errorf("operator Pod %+v", pod)
	}
	if s := h.Scheduling(); !s.Resources.Requests.Cpu().Equal(resource.MustParse("100m")) || len(s.Tolerations) != 1 {
		t.Errorf("hub controller scheduling %+v", s)
	}
}

// TestReadRefuses checks that a key the chart lacks, a value of the wrong
// type and a value the verb cannot apply are refused, naming the file and
// the key.
func TestReadRefuses(t *testing.T) {
	tests := []struct {
		name       string
		klusterlet bool
		content    string
		want       []string
	}{
		{name: "unknown top-level key", content: "replicaCount: 3\n", want: []string{"unknown key replicaCount", "hub chart"}},
		{name: "unknown nested key", content: "clusterManager:\n  tlsProfile:\n    minTlsVersion: VersionTLS13\n", want: []string{"unknown key clusterManager.tlsProfile.minTlsVersion"}},
		{name: "unknown key in a Kubernetes type", content: "tolerations:\n- key: a\n  operater: Exists\n", want: []string{"unknown key tolerations[0].operater"}},
		{name: "unknown key in an inline field", content: "extraVolumes:\n- name: a\n  configmap: {name: a}\n", want: []string{"unknown key extraVolumes[0].configmap"}},
		{name: "wrong type", content: "imagePullSecrets: mirror\n", want: []string{"imagePullSecrets"}},
		{name: "not an object", content: "- a\n", want: []string{"no YAML object"}},
		{name: "registry with a slash", content: "images: {registry: quay.io/org/}\n", want: []string{"images.registry", "slash"}},
		{name: "conversion URL", content: "conversionWebhookURL: http://example.com/convert\n", want: []string{"conversionWebhookURL"}},
		{name: "TLS version", content: "clusterManager: {tlsProfile: {minTLSVersion: VersionTLS10}}\n", want: []string{"clusterManager.tlsProfile"}},
		{name: "network policy namespace", content: "clusterManager: {networkPolicyConfiguration: {monitoringNamespace: Mon}}\n", want: []string{"monitoringNamespace", "Mon"}},
		{name: "root operator", content: "podSecurityContext: {runAsUser: 0, runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n", want: []string{"runAsUser", "restricted"}},
		{name: "hostPath volume", content: "extraVolumes: [{name: h, hostPath: {path: /}}]\n", want: []string{"hostPath", "restricted"}},
		{name: "bootstrap kubeconfig", klusterlet: true, content: "bootstrapHubKubeConfig: x\n", want: []string{"bootstrapHubKubeConfig", "--hub-token"}},
		{name: "agent namespace", klusterlet: true, content: "klusterlet: {namespace: open-cluster-management-agent-2}\n", want: []string{"klusterlet.namespace"}},
		{name: "hosted mode", klusterlet: true, content: "klusterlet: {mode: Hosted}\n", want: []string{"klusterlet.mode", "--mode hosted"}},
		{name: "cluster name", klusterlet: true, content: "klusterlet: {clusterName: Cluster_1}\n", want: []string{"klusterlet.clusterName"}},
		{name: "external URL", klusterlet: true, content: "klusterlet: {externalServerURLs: [{url: http://a}]}\n", want: []string{"klusterlet.externalServerURLs[0].url"}},
		{name: "token expiration without token", klusterlet: true, content: "klusterlet: {registrationConfiguration: {addOnKubeClientRegistrationDriver: {token: {expirationSeconds: 3600}}}}\n", want: []string{"expirationSeconds", "authType token"}},
		{name: "privileged operator", klusterlet: true, content: "operator: {securityContext: {privileged: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}\n", want: []string{"privileged", "restricted"}},
		{name: "unknown key under operator", klusterlet: true, content: "operator: {replicas: 2}\n", want: []string{"unknown key operator.replicas", "klusterlet chart"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			var err error
			if tt.klusterlet {
				_, err = ReadKlusterlet("--values-file", path)
			} else {
				_, err = ReadHub("--values-file", path)
			}
			require.Error(t, err)
			for _, w := range append(tt.want, "--values-file "+path) {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// TestReadKlusterlet checks the klusterlet chart's values: the top-level
// Pod values place the agent and the operator, those under operator win for
// the operator, and the values without a flag reach the agent's values.
func TestReadKlusterlet(t *testing.T) {
	path := writeFile(t, `
klusterlet:
  clusterName: cluster1
  namespace: open-cluster-management-agent
  mode: Singleton
  workConfiguration: {hubKubeAPIQPS: 20, hubKubeAPIBurst: 40}
bootstrapHubKubeConfig: ""
nodeSelector: {infra: "true"}
resources: {requests: {cpu: 100m}}
priorityClassName: high
operator:
  resources: {requests: {cpu: 10m}}
  nodeSelector: {}
`)
	k, err := ReadKlusterlet("--klusterlet-values-file", path)
	if err != nil {
		t.Fatal(err)
	}
	var v config.AgentValues
	k.Agent(&v)
	if v.NodeSelector["infra"] != "true" || !v.Resources.Requests.Cpu().Equal(resource.MustParse("100m")) || v.PriorityClassName != "high" || v.HubKubeAPIQPS != 20 || v.HubKubeAPIBurst != 40 {
		t.Errorf("agent values %+v", v)
	}
	op := k.OperatorPod()
	if !op.Resources.Requests.Cpu().Equal(resource.MustParse("10m")) {
		t.Errorf("operator resources %v, want operator.resources", op.Resources)
	}
	if op.NodeSelector["infra"] != "true" || op.PriorityClassName != "high" {
		t.Errorf("operator Pod %+v, want the top-level nodeSelector (operator's is empty) and priorityClassName", op)
	}
}

// TestOperatorPodEmpty checks that empty objects are unset, as Helm's
// default takes them: the manifests keep their own.
func TestOperatorPodEmpty(t *testing.T) {
	p := Pod{Resources: &corev1.ResourceRequirements{}, PodSecurityContext: &corev1.PodSecurityContext{}, NodeSelector: map[string]string{}}
	got := p.OperatorPod(nil)
	if got.Resources != nil || got.PodSecurityContext != nil || got.NodeSelector != nil {
		t.Errorf("OperatorPod(%+v) = %+v, want every field unset", p, got)
	}
	p.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
	if p.OperatorPod(nil).SecurityContext == nil {
		t.Error("a set securityContext was dropped")
	}
}

// TestFlags checks that a flag given wins over the file, that the alias
// names the file too, and that both at once are refused.
func TestFlags(t *testing.T) {
	var path, registry string
	var names []string
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddFlag(fs, &path, "cluster-manager-values-file", "hub", "the hub")
	fs.StringVar(&registry, "image-registry", "default", "")
	fs.StringSliceVar(&names, "names", nil, "")
	if err := fs.Parse([]string{"--cluster-manager-values-file", "a.yaml", "--names", "x"}); err != nil {
		t.Fatal(err)
	}
	if flag, err := Given(fs, "cluster-manager-values-file"); err != nil || flag != "--cluster-manager-values-file" || path != "a.yaml" {
		t.Errorf("Given = %q, %v; path %q", flag, err, path)
	}
	Set(fs, "image-registry", &registry, "from-file")
	SetSlice(fs, "names", &names, []string{"from-file"})
	if registry != "from-file" || names[0] != "x" {
		t.Errorf("registry %q (want the file's), names %v (want the flag's)", registry, names)
	}
	Set(fs, "image-registry", &registry, "")
	if registry != "from-file" {
		t.Error("an empty value of the file replaced the flag's")
	}
	if err := fs.Parse([]string{"--values-file", "b.yaml"}); err != nil {
		t.Fatal(err)
	}
	_, err := Given(fs, "cluster-manager-values-file")
	assert.ErrorContains(t, err, "give one of them", "both flags")
}

// TestChartDefaults checks that each chart's own values.yaml reads: every
// key a chart has is one the verb knows, so that a copy of it is a valid
// values file.
func TestChartDefaults(t *testing.T) {
	if _, err := ReadHub("--values-file", filepath.Join("..", "..", "config", "charts", "hub", "values.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := ReadKlusterlet("--values-file", filepath.Join("..", "..", "config", "charts", "klusterlet", "values.yaml")); err != nil {
		t.Error(err)
	}
}

// TestPullCredentials reads images.imageCredentials as the charts write it
// into the image pull Secret.
func TestPullCredentials(t *testing.T) {
	tests := []struct {
		name       string
		creds      ImageCredentials
		want       string
		wantErrors []string
	}{
		{name: "not created", creds: ImageCredentials{UserName: "u", Password: "p"}},
		{name: "user and password for the registry", creds: ImageCredentials{CreateImageCredentials: true, UserName: "u", Password: "p"},
			want: `{"auths":{"localhost:5001/kubectl-ocm":{"auth":"dTpw","password":"p","username":"u"}}}`},
		{name: "docker config as it is", creds: ImageCredentials{CreateImageCredentials: true, DockerConfigJSON: `{"auths":{"r.example":{"auth":"eDp5"}}}`},
			want: `{"auths":{"r.example":{"auth":"eDp5"}}}`},
		{name: "no password", creds: ImageCredentials{CreateImageCredentials: true, UserName: "u"}, wantErrors: []string{"images.imageCredentials", "userName and password"}},
		{name: "docker config without auths", creds: ImageCredentials{CreateImageCredentials: true, DockerConfigJSON: `{}`}, wantErrors: []string{"images.imageCredentials", "auths"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Images{ImageCredentials: tt.creds}.PullCredentials("localhost:5001/kubectl-ocm")
			if len(tt.wantErrors) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErrors {
					assert.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}
