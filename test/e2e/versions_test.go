package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// TestVersionMatrix runs the getting-started flow across two Kubernetes
// releases and both registration drivers: here, the shared fleet's hub runs
// the current release and its cluster2, joined with the certificate driver,
// the previous one; testPreviousReleaseHub is the other half. In each, the
// seed's ManifestWork runs its Pod on the cluster of the other release, and
// the hub reports that cluster's own version.
func TestVersionMatrix(t *testing.T) {
	f := sharedFleet(t)
	hub, managed := f.env.Cluster("hub"), f.env.Cluster("cluster2")
	assertOtherRelease(t, hub, managed)
	seedWorkRunsOn(t, f, "cluster2")
}

// testPreviousReleaseHub is the version matrix's other half, on a fleet of
// its own: a hub of the previous release that signs no client certificates
// (as Amazon EKS) manages a cluster of the current one, joined with the
// token driver.
func testPreviousReleaseHub(t *testing.T) {
	parallel(t)
	f := startFleetWith(t, framework.Options{Clusters: []string{"hub", "cluster1"}, Previous: []string{"hub"}, NoClientSigning: []string{"hub"}})
	hub, managed := f.env.Cluster("hub"), f.env.Cluster("cluster1")
	assertOtherRelease(t, hub, managed)
	f.joinFlags = []string{"--registration-auth", "token"}
	start := time.Now()
	f.joinAll(t, "cluster1")
	t.Logf("join --registration-auth token → accept --wait → Available: %s", time.Since(start).Round(10*time.Millisecond))
	assertTokenCredential(t, f, "cluster1")
	seedWorkRunsOn(t, f, "cluster1")
	out := f.ocm(t, "version", "--context", "hub")
	assert.Contains(t, out, "cluster1", "kubectl ocm version lists the agent of cluster1")
	out = f.ocm(t, "get", "klusterlet", "--context", "cluster1")
	assert.Contains(t, out, "token", "kubectl ocm get klusterlet shows the token driver")
	// The agent, a Pod on cluster1's node, follows the CA bundle the
	// hub publishes in its cluster namespace and reports what it trusts.
	out = f.ocm(t, "hub", "rotate-ca", "--check", "--wait", "--timeout", "2m", "--context", "hub")
	assert.Contains(t, out, "All 1 clusters are ready", "kubectl ocm hub rotate-ca --check: cluster1 trusts the hub's CA")
}

// assertTokenCredential checks that the agent of cluster holds a token of
// its hub identity (the ServiceAccount named after the cluster in the hub's
// token namespace, identity.AgentTokenNamespace) and
// no client certificate, and that the hub signed no certificate for it.
func assertTokenCredential(t *testing.T, f *fleet, cluster string) {
	t.Helper()
	sec, err := f.env.Cluster(cluster).Clientset().CoreV1().Secrets(config.AgentNamespace).Get(t.Context(), operatorv1.HubKubeConfigSecret, metav1.GetOptions{})
	require.NoError(t, err, "the agent's hub kubeconfig Secret on %s", cluster)
	assert.Empty(t, sec.Data[kubeconfig.TLSCertKey], "no client certificate in the hub credential")
	claims, err := kubeconfig.ParseServiceAccountToken(sec.Data[kubeconfig.TokenKey])
	require.NoError(t, err, "the hub credential's token")
	assert.Equal(t, identity.AgentTokenNamespace+"/"+identity.AgentTokenServiceAccount(cluster), claims.Namespace+"/"+claims.Name, "the token's ServiceAccount")
	csrs, err := f.env.Cluster("hub").Clientset().CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{LabelSelector: clusterv1.ClusterNameLabelKey + "=" + cluster})
	require.NoError(t, err)
	for _, c := range csrs.Items {
		assert.Empty(t, c.Status.Certificate, "CSR %s of signer %s has a certificate on a hub that signs none", c.Name, c.Spec.SignerName)
	}
}

// assertOtherRelease checks that hub and managed run different minor
// releases of Kubernetes, so that the matrix tests what it says.
func assertOtherRelease(t *testing.T, hub, managed *framework.Cluster) {
	t.Helper()
	h, m := serverVersion(t, hub), serverVersion(t, managed)
	require.NotEqual(t, h.Minor(), m.Minor(), "hub %s and %s %s run the same minor release", h, managed.Name, m)
	t.Logf("hub runs Kubernetes %s, %s runs %s", h, managed.Name, m)
}

// serverVersion returns the version the cluster's API server reports.
func serverVersion(t *testing.T, c *framework.Cluster) *version.Version {
	t.Helper()
	info, err := c.Clientset().Discovery().ServerVersion()
	require.NoError(t, err, "the version of %s", c.Name)
	v, err := version.ParseGeneric(info.GitVersion)
	require.NoError(t, err, "the version of %s", c.Name)
	return v
}

// seedWorkRunsOn applies the seed ManifestWork mw-01, in the namespace of
// cluster, and waits until its Pod runs there and says hello; it checks
// that the hub reports the cluster's Kubernetes version, then deletes the
// work and waits until the Pod is gone.
func seedWorkRunsOn(t *testing.T, f *fleet, cluster string) {
	t.Helper()
	hub, managed := f.env.Cluster("hub").Client(), f.env.Cluster(cluster)
	mw := seedWork(t, cluster)
	require.NoError(t, hub.Create(t.Context(), mw))
	waitWorkApplied(t, hub, cluster, mw.Name, 2*time.Minute)
	framework.Eventually(t.Context(), t, 3*time.Minute, "Pod default/hello running on "+cluster, func(ctx context.Context) (bool, error) {
		pod, err := managed.Clientset().CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return pod.Status.Phase == corev1.PodRunning, nil
	})
	framework.Eventually(t.Context(), t, time.Minute, "the hello Pod's log on "+cluster, func(ctx context.Context) (bool, error) {
		data, err := managed.Clientset().CoreV1().Pods("default").GetLogs("hello", &corev1.PodLogOptions{}).DoRaw(ctx)
		return err == nil && string(data) == "Hello, Kubernetes!\n", nil
	})

	want := serverVersion(t, managed)
	mc := &clusterv1.ManagedCluster{}
	require.NoError(t, hub.Get(t.Context(), client.ObjectKey{Name: cluster}, mc))
	require.True(t, meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), "%s Available", cluster)
	assert.Equal(t, "v"+want.String(), mc.Status.Version.Kubernetes, "the Kubernetes version the hub reports for %s", cluster)

	require.NoError(t, hub.Delete(t.Context(), mw))
	framework.Eventually(t.Context(), t, 2*time.Minute, "Pod default/hello gone from "+cluster, func(ctx context.Context) (bool, error) {
		_, err := managed.Clientset().CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err == nil {
			return false, nil
		}
		return client.IgnoreNotFound(err) == nil, client.IgnoreNotFound(err)
	})
}

// seedWork returns the seed ManifestWork mw-01, unchanged but for its
// namespace, which is cluster's.
func seedWork(t *testing.T, cluster string) *workv1.ManifestWork {
	t.Helper()
	data := seeds.Data(t, "001-manifestwork-mw-01.yaml")
	mw := &workv1.ManifestWork{}
	require.NoError(t, yaml.UnmarshalStrict(data, mw), "decode the seed ManifestWork")
	require.Equal(t, "cluster1", mw.Namespace, fmt.Sprintf("the seed's namespace changed: %s", mw.Namespace))
	mw.Namespace = cluster
	return mw
}
