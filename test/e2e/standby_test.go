package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

// testStandbyHub runs the standby hub as it ships, on nodes: two hubs
// installed with hub init (the standby approving first joins by itself),
// cluster1 joined to the primary and then given the standby with
// join --add-hub, the same work delivered from both. Then the primary's API
// server dies: after the hub connection timeout the agent's Pod registers
// with the standby, cluster1 is Available there and the standby's work takes
// over the applied objects. The workload's Pod runs on throughout: no
// applied object is deleted or recreated.
func testStandbyHub(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "hub2", "cluster1")
	ctx := t.Context()
	primary, standby, managed := f.env.Cluster("hub"), f.env.Cluster("hub2"), f.env.Cluster("cluster1")
	const cluster, app = "cluster1", "standby-app"

	initOut := f.hubInit(t)
	token, apiserver := joinArgs(t, initOut)
	standbyOut := f.ocm(t, "hub", "init", "--context", "hub2", "--wait",
		"--auto-approved-csr-identities", identity.BootstrapUser)
	standbyToken, standbyServer := joinArgs(t, standbyOut)
	f.ocm(t, append([]string{"join", "--hub-token", token, "--hub-apiserver", apiserver, "--cluster-name", cluster, "--context", cluster}, pinFlags(t, initOut)...)...)
	f.ocm(t, "accept", "--clusters", cluster, "--context", "hub", "--wait")
	waitJoinedAvailable(t, primary.Client(), cluster)
	// The primary's records are evicted soon after the failover, so that
	// the test sees what their eviction does to the objects.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"workConfiguration":{"appliedManifestWorkEvictionGracePeriod":"20s"}}}`))
	require.NoError(t, managed.Client().Patch(ctx, &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName}}, patch))

	for _, h := range []*framework.Cluster{primary, standby} {
		// On the standby hub, prepared for the cluster before it registers
		// there.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster, Annotations: map[string]string{clusternamespace.PreparedAnnotation: cluster}}}
		if err := h.Client().Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		w, err := framework.AppWork(cluster, "app", app)
		require.NoError(t, err)
		require.NoError(t, h.Client().Create(ctx, w))
	}
	waitAppWork(t, primary.Client(), cluster, 2*time.Minute)

	out := f.ocm(t, append([]string{"join", "--add-hub", "--hub-token", standbyToken, "--hub-apiserver", standbyServer,
		"--hub-connection-timeout-seconds", fmt.Sprint(operatorv1.MinHubConnectionTimeoutSeconds), "--context", cluster}, pinFlags(t, standbyOut)...)...)
	assert.Contains(t, out, "Added hub "+standbyServer+" as hub 2 of cluster "+cluster)
	// join --add-hub returned once the agent runs with the new hub list:
	// its Deployments rolled out, no Pod of the old list left.
	agentRolledOut(t, managed.Client())
	// The agent's Pod restarts with both hubs and stays with the primary,
	// the hub its credential is for.
	framework.Eventually(t.Context(), t, 3*time.Minute, "the agent connected to hub 1 of 2", func(ctx context.Context) (bool, error) {
		k := &operatorv1.Klusterlet{}
		if err := managed.Client().Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionHubConnectionDegraded)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, apiserver) && strings.Contains(c.Message, "(hub 1 of 2"), nil
	})
	currentHubShown(t, f, cluster, apiserver)
	waitDeploymentAvailable(t, managed.Client(), app, "app")
	pods := &corev1.PodList{}
	require.NoError(t, managed.Client().List(ctx, pods, client.InNamespace(app)))
	require.Len(t, pods.Items, 1, "the app's Pods")
	pod := pods.Items[0]

	objects := faults.WatchObjects(t, managed, app,
		corev1.SchemeGroupVersion.WithResource("configmaps"), appsv1.SchemeGroupVersion.WithResource("deployments"))
	killed := time.Now()
	require.NoError(t, primary.StopAPIServer())
	t.Logf("stopped the primary hub's API server; the agent moves after %ds without a lease renewal", operatorv1.MinHubConnectionTimeoutSeconds)
	framework.Eventually(t.Context(), t, 6*time.Minute, cluster+" Available on the standby hub", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		err := standby.Client().Get(ctx, client.ObjectKey{Name: cluster}, mc)
		return err == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), client.IgnoreNotFound(err)
	})
	available := time.Since(killed)
	waitAppWork(t, standby.Client(), cluster, 2*time.Minute)
	applied := time.Since(killed)
	t.Logf("failover on nodes: primary stopped → %s Available on the standby %s, → its work applied there %s (hub connection timeout %ds)",
		cluster, available.Round(100*time.Millisecond), applied.Round(100*time.Millisecond), operatorv1.MinHubConnectionTimeoutSeconds)
	currentHubShown(t, f, cluster, standbyServer)

	// The primary's records go after the grace period; the objects they
	// shared with the standby's records stay, and so does the app's Pod.
	framework.Eventually(t.Context(), t, 2*time.Minute, "the primary's AppliedManifestWork evicted", func(ctx context.Context) (bool, error) {
		list := &workv1.AppliedManifestWorkList{}
		err := managed.Client().List(ctx, list)
		return err == nil && len(list.Items) == 1, err
	})
	after := &corev1.Pod{}
	require.NoError(t, managed.Client().Get(ctx, client.ObjectKeyFromObject(&pod), after), "the app's Pod after the failover")
	assert.Equal(t, pod.UID, after.UID, "the app's Pod was replaced")
	t.Logf("applied objects deleted: %d, recreated: %d", len(objects.Deleted()), len(objects.Recreated()))
	assert.Empty(t, objects.Deleted(), "objects the failover deleted")
	assert.Empty(t, objects.Recreated(), "objects the failover recreated")
	assert.True(t, slices.Contains(objects.Objects(), "deployments/"+app+"/app"), "objects seen: %v", objects.Objects())

	// The agent's credential Secret is for the standby now.
	s := &corev1.Secret{}
	require.NoError(t, managed.Client().Get(ctx, client.ObjectKey{Namespace: config.AgentNamespace, Name: operatorv1.HubKubeConfigSecret}, s))
	assert.Contains(t, string(s.Data["kubeconfig"]), standbyServer, "the hub kubeconfig after the failover")
}

// waitAppWork waits until ManifestWork app of cluster on hub is Applied and
// Available.
func waitAppWork(t *testing.T, hub client.Client, cluster string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t.Context(), t, timeout, "work "+cluster+"/app applied", func(ctx context.Context) (bool, error) {
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) && meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable), nil
	})
}

// currentHubShown waits until get klusterlet on cluster shows server as the
// current hub in its Hubs table.
func currentHubShown(t *testing.T, f *fleet, cluster, server string) {
	t.Helper()
	var last string
	framework.Eventually(t.Context(), t, 2*time.Minute, "get klusterlet showing "+server+" as the current hub", func(ctx context.Context) (bool, error) {
		out, err := f.quietOCM(ctx, "get", "klusterlet", "--context", cluster)
		last = out
		if err != nil {
			return false, err
		}
		for line := range strings.SplitSeq(out, "\n") {
			if fs := strings.Fields(line); len(fs) == 3 && fs[1] == server && fs[2] == "yes" {
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("$ kubectl ocm get klusterlet --context %s\n%s", cluster, last)
	assert.Contains(t, last, "Hub connection timeout:")
}

// agentRolledOut requires, now and without waiting, every agent Deployment
// the Klusterlet lists to be rolled out and every Pod of the agent's
// namespace ready and not terminating.
func agentRolledOut(t *testing.T, c client.Client) {
	t.Helper()
	ctx := t.Context()
	k := &operatorv1.Klusterlet{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k))
	deployments := 0
	for _, g := range k.Status.Generations {
		if g.Group != appsv1.GroupName || g.Resource != "deployments" {
			continue
		}
		deployments++
		dep := &appsv1.Deployment{}
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Name}, dep))
		st := deploystatus.Of(dep)
		assert.True(t, st.Done, "Deployment %s/%s: %s", g.Namespace, g.Name, st)
	}
	require.NotZero(t, deployments, "the Klusterlet lists no agent Deployment")
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace(k.AgentNamespace())))
	for _, p := range pods.Items {
		ready := false
		for _, cond := range p.Status.Conditions {
			ready = ready || (cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue)
		}
		assert.True(t, ready && p.DeletionTimestamp == nil, "agent Pod %s: phase %s, ready %v, terminating %v", p.Name, p.Status.Phase, ready, p.DeletionTimestamp != nil)
	}
}
