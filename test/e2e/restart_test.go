package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testRestarts kills and restarts each moving part while works are applied:
// the agent in the middle of applying a work, the hub controller, and the
// managed cluster's API server. Nothing may be lost or applied twice, and
// every status converges.
func testRestarts(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1")
	f.joinAll(t, "cluster1")
	hub := f.env.Cluster("hub").Client()
	c1 := f.env.Cluster("cluster1")
	ctx := t.Context()

	const n = 100
	t.Run("agent killed mid-apply", func(t *testing.T) {
		f.agent(t, "cluster1")
		require.NoError(t, hub.Create(ctx, configMapWork("cluster1", "many", n, "v1")))
		// Kill it as soon as the first of the work's ConfigMaps exists on
		// cluster1, while it is still creating the others.
		deadline := time.Now().Add(time.Minute)
		for {
			list := &corev1.ConfigMapList{}
			require.NoError(t, c1.Client().List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"e2e-work": "many"}))
			if len(list.Items) > 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "the agent never started applying work many")
			time.Sleep(5 * time.Millisecond) // a tight poll, to catch the apply in progress
		}
		killed := f.kill(t, "cluster1", config.AgentNamespace, agentDeployment)
		list := &corev1.ConfigMapList{}
		require.NoError(t, c1.Client().List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"e2e-work": "many"}))
		t.Logf("agent killed with %d of %d ConfigMaps created", len(list.Items), n)
		waitWorkApplied(t, hub, "cluster1", "many", 2*time.Minute)
		assert.NotEqual(t, killed.id, f.agent(t, "cluster1").id, "the agent was not restarted")
		assertAppliedOnce(t, c1.Client(), "many", n)
	})

	t.Run("hub controller restarted", func(t *testing.T) {
		// An add-on object stored at v1beta1: the restarted controller's
		// cache of ManagedClusterAddOns at v1alpha1 needs its own conversion
		// webhook to sync.
		probe := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "restart-probe"}}
		// The create converts through the webhook, which a hub controller
		// restarted by a lost leader election on a loaded machine may not
		// serve for a moment.
		framework.Eventually(t.Context(), t, time.Minute, "ManagedClusterAddOn restart-probe created", func(ctx context.Context) (bool, error) {
			err := hub.Create(ctx, probe.DeepCopy())
			return err == nil || apierrors.IsAlreadyExists(err), client.IgnoreAlreadyExists(err)
		})
		defer framework.Eventually(t.Context(), t, time.Minute, "ManagedClusterAddOn restart-probe deleted", func(ctx context.Context) (bool, error) {
			err := client.IgnoreNotFound(hub.Delete(ctx, probe.DeepCopy()))
			return err == nil, err
		})
		killed := f.kill(t, "hub", config.HubNamespace, hubController)
		require.NoError(t, hub.Create(ctx, configMapWork("cluster1", "after-hub-restart", 1, "v1")))
		waitWorkApplied(t, hub, "cluster1", "after-hub-restart", time.Minute)
		f.readyAgain(t, "hub", config.HubNamespace, hubController, killed)
		framework.Eventually(t.Context(), t, time.Minute, "the restarted hub controller converting add-on objects", func(ctx context.Context) (bool, error) {
			err := hub.Get(ctx, client.ObjectKeyFromObject(probe), &addonv1alpha1.ManagedClusterAddOn{})
			return err == nil, err
		})
		mc := &clusterv1.ManagedCluster{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc))
		assert.True(t, meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted), "the restart lost the acceptance")
		assert.True(t, meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), "the restart made cluster1 unavailable")
		assertAppliedOnce(t, c1.Client(), "many", n)
	})

	t.Run("managed API server restarted", func(t *testing.T) {
		require.NoError(t, c1.RestartAPIServer(ctx))
		// A change made after the restart reaches the cluster.
		mw := &workv1.ManifestWork{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "many"}, mw))
		base := mw.DeepCopy()
		mw.Spec = configMapWork("cluster1", "many", n, "v2").Spec
		require.NoError(t, hub.Patch(ctx, mw, client.MergeFrom(base)))
		waitWorkApplied(t, hub, "cluster1", "many", 2*time.Minute)
		framework.Eventually(t.Context(), t, time.Minute, "every ConfigMap of work many at v2 on cluster1", func(ctx context.Context) (bool, error) {
			list := &corev1.ConfigMapList{}
			if err := c1.Client().List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"e2e-work": "many"}); err != nil {
				return false, err
			}
			for _, cm := range list.Items {
				if cm.Data["version"] != "v2" {
					return false, nil
				}
			}
			return len(list.Items) == n, nil
		})
		assertAppliedOnce(t, c1.Client(), "many", n)
		framework.Eventually(t.Context(), t, time.Minute, "cluster1 Available after its API server restarted", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
		})
	})
}

// configMapWork returns a ManifestWork of n ConfigMaps in namespace default,
// labeled with the work's name and holding version.
func configMapWork(cluster, name string, n int, version string) *workv1.ManifestWork {
	mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	for i := range n {
		cm := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{"e2e-work": name}},
			Data:       map[string]string{"version": version},
		}
		mw.Spec.Workload.Manifests = append(mw.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Object: cm}})
	}
	return mw
}

// waitWorkApplied waits until the work is Applied at its current generation.
func waitWorkApplied(t *testing.T, hub client.Client, cluster, name string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t.Context(), t, timeout, "work "+cluster+"/"+name+" Applied at its generation", func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkApplied)
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == mw.Generation, nil
	})
}

// assertAppliedOnce checks that the work's n ConfigMaps exist once each on
// the managed cluster and that its AppliedManifestWork records exactly them,
// with their current UIDs: nothing was created twice or left behind. The
// agent writes the record after it applies, so the check waits for it.
func assertAppliedOnce(t *testing.T, managed client.Client, work string, n int) {
	t.Helper()
	framework.Eventually(t.Context(), t, time.Minute, fmt.Sprintf("the %d ConfigMaps of work %s applied once and recorded", n, work), func(ctx context.Context) (bool, error) {
		list := &corev1.ConfigMapList{}
		if err := managed.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"e2e-work": work}); err != nil {
			return false, err
		}
		if len(list.Items) != n {
			return false, fmt.Errorf("%d ConfigMaps of work %s, want %d", len(list.Items), work, n)
		}
		uids := map[string]string{}
		for _, cm := range list.Items {
			uids[cm.Name] = string(cm.UID)
		}
		amws := &workv1.AppliedManifestWorkList{}
		if err := managed.List(ctx, amws); err != nil {
			return false, err
		}
		found := false
		for _, amw := range amws.Items {
			if amw.Spec.ManifestWorkName != work {
				continue
			}
			found = true
			if len(amw.Status.AppliedResources) != n {
				return false, fmt.Errorf("AppliedManifestWork %s records %d resources, want %d", amw.Name, len(amw.Status.AppliedResources), n)
			}
			for _, r := range amw.Status.AppliedResources {
				if uids[r.Name] != r.UID {
					return false, fmt.Errorf("AppliedManifestWork %s records %s with UID %s, the ConfigMap has %s", amw.Name, r.Name, r.UID, uids[r.Name])
				}
			}
		}
		if !found {
			return false, fmt.Errorf("no AppliedManifestWork for work %s", work)
		}
		return true, nil
	})
}
