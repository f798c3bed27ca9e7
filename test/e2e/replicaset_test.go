package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestPlacementRollout selects two joined clusters with a Placement created
// by `kubectl ocm placement create` and rolls a ManifestWorkReplicaSet out to
// them progressively, one cluster at a time, with a per-cluster override. A
// change that fails on the first cluster stops the rollout there (maxFailures
// 0) until it is mended; deleting the set removes everything it created.
func TestPlacementRollout(t *testing.T) {
	f := sharedFleet(t)
	hub := f.env.Cluster("hub").Client()
	managed := map[string]client.Client{
		"cluster1": f.env.Cluster("cluster1").Client(),
		"cluster2": f.env.Cluster("cluster2").Client(),
	}
	ctx := t.Context()
	const ns = "rollout"
	require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	f.ocm(t, "clusterset", "bind", "default", "--namespace", ns, "--context", "hub")
	f.ocm(t, "placement", "create", "all", "-n", ns, "--context", "hub")
	framework.Eventually(t.Context(), t, time.Minute, "placement all to select cluster1 and cluster2", func(ctx context.Context) (bool, error) {
		got, err := framework.DecidedClusters(ctx, hub, ns, "all")
		return slices.Equal(got, []string{"cluster1", "cluster2"}), err
	})
	explain := f.ocm(t, "placement", "explain", "all", "-n", ns, "--context", "hub")
	require.Contains(t, explain, "cluster1")
	require.Contains(t, explain, "cluster2")

	set := rolloutSet(ns, "web")
	require.NoError(t, hub.Create(ctx, set))
	for cluster, color := range map[string]string{"cluster1": "red", "cluster2": "blue"} {
		framework.Eventually(t.Context(), t, 2*time.Minute, "ConfigMap web on "+cluster+" with color "+color, func(ctx context.Context) (bool, error) {
			cm := &corev1.ConfigMap{}
			if err := managed[cluster].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, cm); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return cm.Data["color"] == color, nil
		})
	}
	waitRolledOut(t, hub, ns, "web")
	f.ocm(t, "work", "get", "--replicaset", "web", "-n", ns, "--context", "hub")

	t.Run("a failing cluster stops a progressive rollout", func(t *testing.T) {
		// The new version adds a ConfigMap in a namespace no cluster has yet,
		// so the first cluster to get it fails to apply it.
		// The hub controller writes the set's status: read again and retry
		// on a conflict.
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			latest := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, latest); err != nil {
				return err
			}
			latest.Spec.ManifestWorkTemplate.Workload.Manifests = append(latest.Spec.ManifestWorkTemplate.Workload.Manifests,
				manifest(configMap("gate", "web-gate", map[string]string{"version": "v2"})))
			return hub.Update(ctx, latest)
		}))

		var failed string
		framework.Eventually(t.Context(), t, 2*time.Minute, "one cluster's work to fail with the new version", func(ctx context.Context) (bool, error) {
			for cluster := range managed {
				mw := &workv1.ManifestWork{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "web"}, mw); err != nil {
					return false, err
				}
				if len(mw.Spec.Workload.Manifests) == 2 && meta.IsStatusConditionFalse(mw.Status.Conditions, workv1.WorkApplied) &&
					meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkApplied).ObservedGeneration == mw.Generation {
					failed = cluster
					return true, nil
				}
			}
			return false, nil
		})
		// The set reports the failure, and only then is the other cluster
		// checked: it must still have the old version.
		framework.Eventually(t.Context(), t, time.Minute, "the set to count the failed cluster", func(ctx context.Context) (bool, error) {
			s := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, s); err != nil {
				return false, err
			}
			return meta.IsStatusConditionFalse(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut) &&
				s.Status.Summary.Applied < 2, nil
		})
		other := "cluster1"
		if failed == "cluster1" {
			other = "cluster2"
		}
		mw := &workv1.ManifestWork{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Namespace: other, Name: "web"}, mw))
		require.Len(t, mw.Spec.Workload.Manifests, 1, "the rollout went on to %s after %s failed", other, failed)

		// Mended on every cluster, the rollout completes.
		for _, c := range managed {
			require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gate"}}))
		}
		framework.Eventually(t.Context(), t, 3*time.Minute, "the new version on both clusters", func(ctx context.Context) (bool, error) {
			for _, c := range managed {
				if err := c.Get(ctx, client.ObjectKey{Namespace: "gate", Name: "web-gate"}, &corev1.ConfigMap{}); err != nil {
					return false, client.IgnoreNotFound(err)
				}
			}
			return true, nil
		})
		waitRolledOut(t, hub, ns, "web")
	})

	t.Run("deleting the set removes its works and their resources", func(t *testing.T) {
		require.NoError(t, hub.Delete(ctx, &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}))
		framework.Eventually(t.Context(), t, 2*time.Minute, "the works and ConfigMaps gone", func(ctx context.Context) (bool, error) {
			works := &workv1.ManifestWorkList{}
			if err := hub.List(ctx, works, client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: ns + ".web"}); err != nil {
				return false, err
			}
			if len(works.Items) > 0 {
				return false, nil
			}
			for _, c := range managed {
				err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &corev1.ConfigMap{})
				if !apierrors.IsNotFound(err) {
					return false, client.IgnoreNotFound(err)
				}
			}
			return true, nil
		})
	})
}

// waitRolledOut waits until the set's rollout is complete on every cluster.
func waitRolledOut(t *testing.T, hub client.Client, ns, name string) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, "ManifestWorkReplicaSet "+name+" rolled out", func(ctx context.Context) (bool, error) {
		s := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut) &&
			s.Status.Summary.Total == 2 && s.Status.Summary.Available == 2, nil
	})
}

// rolloutSet is a ManifestWorkReplicaSet of one ConfigMap rolled out one
// cluster at a time with no failure allowed, red by default and blue on
// cluster2.
func rolloutSet(ns, name string) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				manifest(configMap("default", name, map[string]string{"color": "red"})),
			}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{
				Name: "all",
				RolloutStrategy: clusterv1alpha1.RolloutStrategy{
					Type: clusterv1alpha1.Progressive,
					Progressive: &clusterv1alpha1.RolloutProgressive{
						MaxConcurrency: intstr.FromInt32(1),
						RolloutConfig:  clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)},
					},
				},
			}},
			Overrides: []workv1alpha1.ManifestWorkOverride{{
				ClusterNames: []string{"cluster2"},
				Patches: []workv1alpha1.ManifestPatch{{
					ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Kind: "ConfigMap", Namespace: "default", Name: name},
					MergePatch:         runtime.RawExtension{Raw: []byte(`{"data":{"color":"blue"}}`)},
				}},
			}},
		},
	}
}

// configMap returns a ConfigMap manifest.
func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"e2e": "rollout"}},
		Data:       data,
	}
}

// manifest wraps an object as a ManifestWork manifest.
func manifest(obj runtime.Object) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Object: obj}}
}
