package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testHubControllerKilledMidRollout kills the hub controller (SIGKILL) while
// a ManifestWorkReplicaSet rolls out progressively, two clusters at a time,
// over simulated clusters, and while its Placement reschedules onto two more
// clusters. The restarted controller resumes where it was: the ManifestWorks
// of the clusters whose rollout had completed are not written again, and the
// Placement's decisions only grow, from the clusters before to those plus
// the two new ones.
func testHubControllerKilledMidRollout(t *testing.T) {
	parallel(t)
	f := startFleetWithHubArgs(t, shortLeaseArgs, "hub")
	f.hubInit(t)
	hub := f.env.Cluster("hub").Client()
	ctx := t.Context()
	const ns, name = "hubkill", "web"
	selected := []string{"sim-1", "sim-2", "sim-3", "sim-4", "sim-5", "sim-6"}
	late := []string{"sim-7", "sim-8"}
	simulateClusters(t, hub, map[string]string{"fleet": "yes"}, selected...)
	simulateClusters(t, hub, nil, late...)
	require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	bindDefaultSet(t, f, hub, ns)
	require.NoError(t, hub.Create(ctx, fleetPlacement(ns, "fleet")))
	framework.Eventually(t.Context(), t, time.Minute, "placement fleet to select "+fmt.Sprint(selected), func(ctx context.Context) (bool, error) {
		got, err := framework.DecidedClusters(ctx, hub, ns, "fleet")
		return slices.Equal(got, selected), err
	})
	decisions := watchDecisions(t, f.env.Cluster("hub"), ns)

	set := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				manifest(configMap("default", name, map[string]string{"version": "v1"})),
			}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "fleet", RolloutStrategy: clusterv1alpha1.RolloutStrategy{
				Type:        clusterv1alpha1.Progressive,
				Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(2)},
			}}},
		},
	}
	require.NoError(t, hub.Create(ctx, set))
	// The first two clusters complete; the next two get their works and
	// are still rolling out when the controller dies.
	completed := map[string]string{} // cluster → resourceVersion once acknowledged
	for _, mw := range waitSetWorks(t, hub, ns, name, 2) {
		require.NoError(t, ackWork(ctx, hub, mw))
		completed[mw.Namespace] = mw.ResourceVersion
	}
	inFlight := waitSetWorks(t, hub, ns, name, 4)
	for c := range completed {
		delete(inFlight, c)
	}
	require.Len(t, inFlight, 2)

	// The reschedule starts, and the controller dies in its middle.
	pid := f.hubControllerPID()
	require.NotZero(t, pid, "the hub controller is not running")
	for _, c := range late {
		// The hub controller writes the same ManagedCluster (finalizer,
		// taints): read again and retry on a conflict.
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return err
			}
			mc.Labels["fleet"] = "yes"
			return hub.Update(ctx, mc)
		}))
	}
	killed := time.Now()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// The in-flight clusters complete while no controller runs.
	for c, mw := range inFlight {
		require.NoError(t, ackWork(ctx, hub, mw))
		completed[c] = mw.ResourceVersion
	}

	framework.Eventually(t.Context(), t, time.Minute, "the hub controller restarted", func(context.Context) (bool, error) {
		now := f.hubControllerPID()
		return now != 0 && now != pid, nil
	})
	restarted := time.Since(killed)
	waitSetWorks(t, hub, ns, name, 5)
	resumed := time.Since(killed)
	want := slices.Sorted(slices.Values(append(slices.Clone(selected), late...)))
	framework.Eventually(t.Context(), t, time.Minute, "placement fleet to select "+fmt.Sprint(want), func(ctx context.Context) (bool, error) {
		_, _, got := decisions.snapshot()
		return slices.Equal(got, want), nil
	})
	rescheduled := time.Since(killed)

	// The rest of the rollout completes as the simulated agents acknowledge.
	framework.Eventually(t.Context(), t, 2*time.Minute, "ManifestWorkReplicaSet "+name+" rolled out to every cluster", func(ctx context.Context) (bool, error) {
		works, err := setWorks(ctx, hub, ns, name)
		if err != nil {
			return false, err
		}
		for c, mw := range works {
			if _, done := completed[c]; done || meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkAvailable) {
				continue
			}
			if err := ackWork(ctx, hub, mw); err != nil {
				return false, err
			}
		}
		s := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut) &&
			s.Status.Summary.Total == len(want) && s.Status.Summary.Available == len(want), nil
	})

	works, err := setWorks(ctx, hub, ns, name)
	require.NoError(t, err)
	require.Len(t, works, len(want), "one ManifestWork per selected cluster")
	rewrites := 0
	for c, rv := range completed {
		if got := works[c].ResourceVersion; got != rv {
			rewrites++
			t.Errorf("the ManifestWork of %s, completed before the restart, was written again (resourceVersion %s → %s)", c, rv, got)
		}
	}
	changes, removed, got := decisions.snapshot()
	assert.Empty(t, removed, "clusters dropped from the decisions across the restart")
	assert.Equal(t, want, got)
	t.Logf("fault=hub-killed-mid-rollout restart=%s resume=%s reschedule=%s completed-clusters=%d rewrites=%d decision-changes=%d decision-removals=%d lease=%v",
		restarted.Round(time.Millisecond), resumed.Round(time.Millisecond), rescheduled.Round(time.Millisecond),
		len(completed), rewrites, changes, len(removed), shortLeaseArgs)
}

// bindDefaultSet binds the default ManagedClusterSet, which the hub
// controller creates, to namespace ns.
func bindDefaultSet(t *testing.T, f *fleet, hub client.Client, ns string) {
	t.Helper()
	framework.Eventually(t.Context(), t, time.Minute, "ManagedClusterSet default", func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, client.ObjectKey{Name: "default"}, &clusterv1beta2.ManagedClusterSet{})
		return err == nil, client.IgnoreNotFound(err)
	})
	f.ocm(t, "clusterset", "bind", "default", "--namespace", ns, "--context", "hub")
}

// fleetPlacement is a Placement of the clusters labeled fleet=yes. It
// tolerates the taints of clusters without an agent: the simulated
// clusters report no availability.
func fleetPlacement(ns, name string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "yes"}}},
		}}, Tolerations: []clusterv1beta1.Toleration{
			{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
			{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists},
		}},
	}
}

// setWorks returns the ManifestWorks of the ManifestWorkReplicaSet ns/name by cluster.
func setWorks(ctx context.Context, hub client.Client, ns, name string) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := hub.List(ctx, list, client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: ns + "." + name}); err != nil {
		return nil, err
	}
	out := map[string]*workv1.ManifestWork{}
	for i := range list.Items {
		out[list.Items[i].Namespace] = &list.Items[i]
	}
	return out, nil
}

// waitSetWorks waits until the ManifestWorkReplicaSet ns/name has at least
// n ManifestWorks and returns them by cluster.
func waitSetWorks(t *testing.T, hub client.Client, ns, name string, n int) map[string]*workv1.ManifestWork {
	t.Helper()
	var works map[string]*workv1.ManifestWork
	framework.Eventually(t.Context(), t, time.Minute, "ManifestWorkReplicaSet "+name+" with "+strconv.Itoa(n)+" ManifestWorks", func(ctx context.Context) (bool, error) {
		var err error
		works, err = setWorks(ctx, hub, ns, name)
		return len(works) >= n, err
	})
	return works
}
