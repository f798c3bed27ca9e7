package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestVersionMatrix runs the getting-started flow across two Kubernetes
// releases, both ways: the shared fleet's hub runs the current release and
// its cluster2 the previous one; a second fleet has a hub of the previous
// release manage a cluster of the current one. In each, the seed's
// ManifestWork runs its Pod on the cluster of the other release, and the
// hub reports that cluster's own version.
func TestVersionMatrix(t *testing.T) {
	t.Run("a hub of the current release manages a cluster of the previous one", func(t *testing.T) {
		f := sharedFleet(t)
		hub, managed := f.env.Cluster("hub"), f.env.Cluster("cluster2")
		assertOtherRelease(t, hub, managed)
		seedWorkRunsOn(t, f, "cluster2")
	})

	t.Run("a hub of the previous release manages a cluster of the current one", func(t *testing.T) {
		f := startFleetWith(t, framework.Options{Clusters: []string{"hub", "cluster1"}, Previous: []string{"hub"}})
		hub, managed := f.env.Cluster("hub"), f.env.Cluster("cluster1")
		assertOtherRelease(t, hub, managed)
		f.joinAll(t, "cluster1")
		seedWorkRunsOn(t, f, "cluster1")
		out := f.ocm(t, "version", "--context", "hub")
		assert.Contains(t, out, "cluster1", "kubectl ocm version lists the agent of cluster1")
	})
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
	eventually(t, 3*time.Minute, "Pod default/hello running on "+cluster, func(ctx context.Context) (bool, error) {
		pod, err := managed.Clientset().CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return pod.Status.Phase == corev1.PodRunning, nil
	})
	eventually(t, time.Minute, "the hello Pod's log on "+cluster, func(ctx context.Context) (bool, error) {
		data, err := managed.Clientset().CoreV1().Pods("default").GetLogs("hello", &corev1.PodLogOptions{}).DoRaw(ctx)
		return err == nil && string(data) == "Hello, Kubernetes!\n", nil
	})

	want := serverVersion(t, managed)
	mc := &clusterv1.ManagedCluster{}
	require.NoError(t, hub.Get(t.Context(), client.ObjectKey{Name: cluster}, mc))
	require.True(t, meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), "%s Available", cluster)
	assert.Equal(t, "v"+want.String(), mc.Status.Version.Kubernetes, "the Kubernetes version the hub reports for %s", cluster)

	require.NoError(t, hub.Delete(t.Context(), mw))
	eventually(t, 2*time.Minute, "Pod default/hello gone from "+cluster, func(ctx context.Context) (bool, error) {
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
	root, err := framework.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "..", "shared", "examples", "seeds", "001-manifestwork-mw-01.yaml"))
	require.NoError(t, err)
	mw := &workv1.ManifestWork{}
	require.NoError(t, yaml.UnmarshalStrict(data, mw), "decode the seed ManifestWork")
	require.Equal(t, "cluster1", mw.Namespace, fmt.Sprintf("the seed's namespace changed: %s", mw.Namespace))
	mw.Namespace = cluster
	return mw
}
