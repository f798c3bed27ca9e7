package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/capi"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testImportFromTheHub imports cluster1 and cluster2 from the hub, with no
// command run against either: `kubectl ocm import` refuses while the hub
// runs no importer and names the switch; with the ClusterImporter gate on,
// the operator runs the importer as a Pod on the hub's node; a wrong token,
// a server nothing serves and a kubeconfig for the hub each end in a named
// condition and install nothing on cluster1; then import with cluster1's
// context installs the Klusterlet there, whose agent joins as a Pod on
// cluster1's node, and the cluster becomes Available once accepted. The
// importer renders each Klusterlet from the cluster's values too
// (render-from-config-secret): cluster1's agent registers with the token
// driver its values choose. cluster2 is a Cluster API Cluster on the hub
// (the test plays Cluster API's part): once its control plane is
// initialized the importer creates its ManagedCluster and installs its
// agent with the Cluster's kubeconfig and the values of its
// cluster-import-config.
func testImportFromTheHub(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1", "cluster2")
	hubCluster, spoke := f.env.Cluster("hub"), f.env.Cluster("cluster1")
	hub, managed := hubCluster.Client(), spoke.Client()
	f.hubInit(t)
	// Cluster API is installed before the importer starts, which looks for
	// its Clusters then.
	require.NoError(t, capi.Install(t.Context(), hub))

	importArgs := []string{"import", "cluster1", "--context", "hub", "--managed-cluster-kubeconfig", f.env.Kubeconfig(), "--managed-cluster-context", "cluster1"}
	t.Run("import refuses while the hub runs no importer", func(t *testing.T) {
		out, err := f.tryOCM(t, importArgs...)
		require.Error(t, err)
		assert.Contains(t, out, "turn on its feature gate ClusterImporter")
		assert.Contains(t, out, `"feature":"ClusterImporter","mode":"Enable"`)
		err = hub.Get(t.Context(), client.ObjectKey{Namespace: "cluster1", Name: imp.SecretName}, &corev1.Secret{})
		assert.True(t, apierrors.IsNotFound(err), "a refused import wrote its Secret: %v", err)
	})

	editClusterManager(t, hub, func(cm *operatorv1.ClusterManager) {
		if cm.Spec.RegistrationConfiguration == nil {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{}
		}
		cm.Spec.RegistrationConfiguration.FeatureGates = append(cm.Spec.RegistrationConfiguration.FeatureGates,
			operatorv1.FeatureGate{Feature: "ClusterImporter", Mode: operatorv1.FeatureGateModeTypeEnable})
		// Each cluster's own values over the hub's settings.
		cm.Spec.RegistrationConfiguration.ImporterConfiguration = &operatorv1.ImporterConfiguration{
			Renderers: []string{config.ImportRendererAuto, config.ImportRendererFromConfigSecret}}
	})
	waitDeploymentAvailable(t, hub, config.HubNamespace, "ocm-importer")
	// What `kubectl ocm import` writes besides the Secret: the
	// ManagedCluster and its namespace, which the hub creates only once it
	// accepts the cluster.
	require.NoError(t, hub.Create(t.Context(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}}))
	require.NoError(t, hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}}))

	for _, tc := range []struct {
		name         string
		cfg          *rest.Config
		reason, says string
	}{
		{"a wrong token", &rest.Config{Host: spoke.Server(), BearerToken: "not-a-token", TLSClientConfig: rest.TLSClientConfig{CAData: spoke.CAData()}},
			imp.ReasonImportFailed, "401 Unauthorized"},
		{"a server nothing serves", &rest.Config{Host: strings.TrimSuffix(spoke.Server(), portOf(spoke.Server())) + ":1", BearerToken: "t"},
			imp.ReasonImportFailed, "connection refused"},
		{"a kubeconfig for the hub", hubCluster.RESTConfig(), imp.ReasonKubeConfigGetFailed, "reaches the hub itself"},
	} {
		t.Run(tc.name+" ends in a named condition and installs nothing", func(t *testing.T) {
			// Written as a GitOps repository would, not through import,
			// which refuses a kubeconfig for the hub before writing it.
			kit.WriteImportSecret(t.Context(), t, hub, "cluster1", map[string][]byte{imp.KubeconfigKey: kit.ImportKubeconfig(t, tc.cfg)})
			kit.WaitImportCondition(t.Context(), t, hub, "cluster1", metav1.ConditionFalse, tc.reason, tc.says)
			for _, ns := range []string{operatorv1.OperatorNamespace, operatorv1.DefaultAgentNamespace} {
				err := managed.Get(t.Context(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
				assert.True(t, apierrors.IsNotFound(err), "namespace %s exists on cluster1 after a failed import (err %v)", ns, err)
			}
			err := hub.Get(t.Context(), client.ObjectKey{Name: operatorv1.DefaultAgentNamespace}, &corev1.Namespace{})
			assert.True(t, apierrors.IsNotFound(err), "the import installed an agent on the hub (err %v)", err)
		})
	}

	t.Run("import with cluster1's context and values installs the agent as Pods", func(t *testing.T) {
		require.NoError(t, client.IgnoreNotFound(hub.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: imp.SecretName}})))
		out, err := f.tryOCM(t, append(importArgs, "--wait")...)
		require.Error(t, err, "import without values on a hub that renders from them")
		assert.Contains(t, out, "give the klusterlet chart's values with --values-file")
		// The values: the token driver, whose hub credential is a
		// ServiceAccount token instead of a certificate.
		values := filepath.Join(t.TempDir(), "values.yaml")
		require.NoError(t, os.WriteFile(values, []byte("klusterlet: {registrationConfiguration: {registrationDriver: {authType: token}}}\n"), 0o600))
		out = f.ocm(t, append(importArgs, "--values-file", values, "--accept", "--wait")...)
		assert.Contains(t, out, "Imported cluster cluster1")
		waitJoinedAvailable(t, hub, "cluster1")
		err = hub.Get(t.Context(), client.ObjectKey{Namespace: "cluster1", Name: imp.SecretName}, &corev1.Secret{})
		assert.True(t, apierrors.IsNotFound(err), "the import Secret is kept (err %v)", err)
		pod, err := f.runningPod(t.Context(), "cluster1", operatorv1.DefaultAgentNamespace, "klusterlet-agent")
		require.NoError(t, err)
		assert.NotEmpty(t, pod.Spec.NodeName, "the agent does not run on cluster1's node")
		require.NoError(t, hub.Create(t.Context(), configMapWork("cluster1", "imported", 1, "v1")))
		waitWorkApplied(t, hub, "cluster1", "imported", 2*time.Minute)
		k := &operatorv1.Klusterlet{}
		require.NoError(t, managed.Get(t.Context(), client.ObjectKey{Name: operatorv1.KlusterletName}, k))
		require.NotNil(t, k.Spec.RegistrationConfiguration)
		require.NotNil(t, k.Spec.RegistrationConfiguration.RegistrationDriver)
		assert.Equal(t, operatorv1.TokenAuthType, k.Spec.RegistrationConfiguration.RegistrationDriver.AuthType, "the values' registration driver")
		hubKubeconfig := &corev1.Secret{}
		require.NoError(t, managed.Get(t.Context(), client.ObjectKey{Namespace: operatorv1.DefaultAgentNamespace, Name: operatorv1.HubKubeConfigSecret}, hubKubeconfig))
		assert.Empty(t, hubKubeconfig.Data[corev1.TLSCertKey], "the agent of the token driver holds a client certificate")
	})

	t.Run("a Cluster API Cluster's cluster is imported once its control plane is initialized", func(t *testing.T) {
		kc, err := imp.Kubeconfig(f.env.Cluster("cluster2").RESTConfig())
		require.NoError(t, err)
		// cluster2's values, as a GitOps repository would hold them.
		require.NoError(t, hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster2"}}))
		require.NoError(t, hub.Create(t.Context(), imp.NewConfigSecret("cluster2", []byte("klusterlet: {externalServerURLs: [{url: \"https://cluster2.example.com:6443\"}]}\n"))))
		require.NoError(t, capi.Provision(t.Context(), hub, "cluster2", "cluster2", kc, false))
		kit.WaitImportCondition(t.Context(), t, hub, "cluster2", metav1.ConditionFalse, imp.ReasonKubeConfigNotFound, "control plane is not initialized")
		require.NoError(t, capi.SetInitialized(t.Context(), hub, "cluster2", "cluster2"))
		f.ocm(t, "accept", "--clusters", "cluster2", "--context", "hub", "--wait")
		waitJoinedAvailable(t, hub, "cluster2")
		pod, err := f.runningPod(t.Context(), "cluster2", operatorv1.DefaultAgentNamespace, "klusterlet-agent")
		require.NoError(t, err)
		assert.NotEmpty(t, pod.Spec.NodeName, "the agent does not run on cluster2's node")
		k := &operatorv1.Klusterlet{}
		require.NoError(t, f.env.Cluster("cluster2").Client().Get(t.Context(), client.ObjectKey{Name: operatorv1.KlusterletName}, k))
		require.Len(t, k.Spec.ExternalServerURLs, 1)
		assert.Equal(t, "https://cluster2.example.com:6443", k.Spec.ExternalServerURLs[0].URL, "the values' externalServerURLs")
	})
}

// portOf returns the port of URL u with its colon, as ":6443".
func portOf(u string) string { return u[strings.LastIndex(u, ":"):] }
