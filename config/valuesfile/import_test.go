package valuesfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// bootstrapYAML is a bootstrap kubeconfig for a hub behind a proxy, with a
// token, indented as a block scalar of the values.
func bootstrapYAML(t *testing.T) string {
	t.Helper()
	kc, err := kubeconfig.ForTokenVia("https://hub.example.com:6443", []byte("-----BEGIN CERTIFICATE-----\n"), "http://proxy.example.com:3128", "abc.def")
	require.NoError(t, err)
	return "bootstrapHubKubeConfig: |\n  " + strings.ReplaceAll(strings.TrimSpace(string(kc)), "\n", "\n  ") + "\n"
}

// TestParseImport shows that the import configuration's values reach the
// agent the importer installs: its bootstrap kubeconfig (a hub address and
// proxy of its own), registration driver, images and pull credentials, and
// the operator's Pod; values left out keep what the earlier renderer gave.
func TestParseImport(t *testing.T) {
	values := bootstrapYAML(t) + `
images:
  registry: registry.example.com/ocm
  tag: v9.9.9
  imageCredentials: {createImageCredentials: true, userName: u, password: p}
klusterlet:
  clusterName: cluster2
  mode: Singleton
  externalServerURLs: [{url: "https://cluster2.example.com:6443"}]
  registrationConfiguration:
    registrationDriver: {authType: token}
  workConfiguration: {workers: {manifestWorks: 3}}
  tlsProfile: {minTLSVersion: VersionTLS13}
priorityClassName: high
`
	k, err := ParseImport("Secret cluster2/cluster-import-config key values.yaml", []byte(values), "cluster2")
	require.NoError(t, err)
	v := config.AgentValues{ClusterName: "cluster2", Image: "hub/ocm-controller:v1", HubAPIServer: "https://hub:6443", BootstrapKubeconfig: []byte("auto"), AppliedWorkWorkers: 7}
	var op config.KlusterletOperatorValues
	pull, err := k.Install(&v, &op)
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/ocm/ocm-controller:v9.9.9", v.Image)
	assert.Equal(t, "https://hub.example.com:6443", v.HubAPIServer)
	info, err := kubeconfig.FromSecret(map[string][]byte{kubeconfig.KubeconfigKey: v.BootstrapKubeconfig})
	require.NoError(t, err)
	assert.Equal(t, "http://proxy.example.com:3128", info.ProxyURL)
	assert.Equal(t, "abc.def", info.Token)
	assert.Equal(t, string(operatorv1.InstallModeSingleton), v.Mode)
	assert.Equal(t, []string{"https://cluster2.example.com:6443"}, v.ExternalServerURLs)
	assert.Equal(t, operatorv1.TokenAuthType, v.RegistrationAuth)
	assert.Equal(t, int32(3), v.ManifestWorkWorkers)
	assert.Equal(t, int32(7), v.AppliedWorkWorkers, "a value the file leaves out changed")
	require.NotNil(t, v.TLSProfile)
	assert.Equal(t, "high", v.PriorityClassName)
	assert.Equal(t, "high", op.PriorityClassName)
	assert.Contains(t, string(pull), "registry.example.com/ocm")

	// Values that set nothing change nothing.
	k, err = ParseImport("s", []byte("{}"), "cluster2")
	require.NoError(t, err)
	before := config.AgentValues{ClusterName: "cluster2", Image: "hub/ocm-controller:v1", BootstrapKubeconfig: []byte("auto")}
	after := before
	pull, err = k.Install(&after, &op)
	require.NoError(t, err)
	assert.Nil(t, pull)
	assert.Equal(t, before.Image, after.Image)
	assert.Equal(t, before.BootstrapKubeconfig, after.BootstrapKubeconfig)
}

// TestParseImportRefuses shows the values the importer refuses, each named
// with the Secret it came from: another cluster's name, Hosted mode,
// NetworkPolicies, a bootstrap kubeconfig that runs a command, names a file
// or carries no credential, and a key the chart does not have.
func TestParseImportRefuses(t *testing.T) {
	const src = "Secret cluster2/cluster-import-config key values.yaml"
	for _, tc := range []struct {
		name, values, says string
	}{
		{"another cluster's name", "klusterlet: {clusterName: cluster1}", `klusterlet.clusterName "cluster1": the importer installs cluster cluster2 under its own name`},
		{"hosted mode", "klusterlet: {mode: Hosted}", "the importer installs the agent in Default or Singleton mode"},
		{"network policies", "klusterlet: {networkPolicyConfiguration: {}}", "the importer installs no NetworkPolicies"},
		{"an exec plugin", `bootstrapHubKubeConfig: |
  apiVersion: v1
  kind: Config
  clusters: [{name: hub, cluster: {server: "https://hub:6443"}}]
  users: [{name: u, user: {exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}}]
  contexts: [{name: c, context: {cluster: hub, user: u}}]
  current-context: c
`, "runs the exec credential plugin"},
		{"a token file", `bootstrapHubKubeConfig: |
  apiVersion: v1
  kind: Config
  clusters: [{name: hub, cluster: {server: "https://hub:6443"}}]
  users: [{name: u, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}]
  contexts: [{name: c, context: {cluster: hub, user: u}}]
  current-context: c
`, "tokenFile"},
		{"no credential", `bootstrapHubKubeConfig: |
  apiVersion: v1
  kind: Config
  clusters: [{name: hub, cluster: {server: "https://hub:6443"}}]
  users: [{name: u, user: {}}]
  contexts: [{name: c, context: {cluster: hub, user: u}}]
  current-context: c
`, "carries no credential"},
		{"an unknown key", "klusterlet: {hubName: x}", "unknown key klusterlet.hubName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseImport(src, []byte(tc.values), "cluster2")
			require.Error(t, err)
			assert.ErrorContains(t, err, src)
			assert.ErrorContains(t, err, tc.says)
		})
	}
}
