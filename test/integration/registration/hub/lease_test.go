package hub

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hublease "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/lease"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testLeaseHealth plays the registration agent of cluster3 (lease period 2 s):
// while it renews the lease and reports Available, the cluster carries no
// hub taint; once it stops, the hub reports Unknown, 2 lease periods after the
// last renewal (the default --lease-grace-ratio), and taints it unreachable.
func testLeaseHealth(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	createCluster(ctx, t, admin, "cluster3", true, 2)
	waitCluster(ctx, t, admin, "cluster3", "accepted", hasCondition(
		clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
	agent := agentClient(t, hubCluster, "cluster3")
	framework.Eventually(ctx, t, pollTimeout, "cluster3's lease readable by its agent", func(ctx context.Context) (bool, error) {
		return true, agent.Get(ctx, client.ObjectKey{Namespace: "cluster3", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
	})

	// The simulated agent: renew every half period, as the agent identity.
	agentCtx, stopAgent := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(500 * time.Millisecond)
		defer ticker.Stop()
		for {
			if err := renew(agentCtx, agent); err != nil && agentCtx.Err() == nil {
				t.Logf("simulated agent: %v", err)
			}
			select {
			case <-agentCtx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	defer func() { stopAgent(); wg.Wait() }()

	mc := waitCluster(ctx, t, admin, "cluster3", "available and untainted", func(mc *clusterv1.ManagedCluster) bool {
		return mc.AvailableStatus() == metav1.ConditionTrue && len(mc.Spec.Taints) == 0 &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionClockSynced)
	})
	t.Logf("cluster3 available, clock synced: %v", meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionClockSynced))

	stopAgent()
	wg.Wait()
	last := &coordinationv1.Lease{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "cluster3", Name: clusterv1.LeaseName}, last); err != nil {
		t.Fatal(err)
	}
	mc = waitCluster(ctx, t, admin, "cluster3", "Unknown and unreachable after the agent stops", func(mc *clusterv1.ManagedCluster) bool {
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		return c != nil && c.Status == metav1.ConditionUnknown && c.Reason == clusterv1.ReasonManagedClusterLeaseUpdateStopped &&
			mc.Spec.FindTaint(clusterv1.ManagedClusterTaintUnreachable) != nil
	})
	// The condition's transition time has a resolution of one second.
	unknownAt := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable).LastTransitionTime.Time
	want := last.Spec.RenewTime.Add(time.Duration(hublease.DefaultGraceRatio * float64(mc.Spec.LeaseDuration())))
	if unknownAt.Before(want.Truncate(time.Second)) || unknownAt.After(want.Add(2*time.Second)) {
		t.Errorf("Available Unknown at %s, want at the last renewal %s + %v lease periods = %s",
			unknownAt.Format(time.RFC3339), last.Spec.RenewTime.Format(time.RFC3339Nano), hublease.DefaultGraceRatio, want.Format(time.RFC3339Nano))
	}
	taint := mc.Spec.FindTaint(clusterv1.ManagedClusterTaintUnreachable)
	if taint.Effect != clusterv1.TaintEffectNoSelect || taint.TimeAdded.IsZero() {
		t.Errorf("unreachable taint %+v: want effect NoSelect and timeAdded set", taint)
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c.Message != "Registration agent stopped updating its lease." {
		t.Errorf("Available message %q", c.Message)
	}
	// Each change of the hub's taints is recorded once: unreachable when
	// the cluster was created, removed when it became available, and
	// unreachable again.
	expectRecordedOnce(ctx, t, admin, mc, "ManagedClusterConditionAvailableUpdated", "available is Unknown", "available is True", "available is Unknown")
}

// renew does what the registration agent does each period: renew the lease
// and report the cluster available.
func renew(ctx context.Context, agent client.Client) error {
	lease := &coordinationv1.Lease{}
	if err := agent.Get(ctx, client.ObjectKey{Namespace: "cluster3", Name: clusterv1.LeaseName}, lease); err != nil {
		return err
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if err := agent.Update(ctx, lease); err != nil {
		return err
	}
	mc := &clusterv1.ManagedCluster{}
	if err := agent.Get(ctx, client.ObjectKey{Name: "cluster3"}, mc); err != nil {
		return err
	}
	if mc.AvailableStatus() == metav1.ConditionTrue {
		return nil
	}
	base := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedClusterAvailable, Message: "Managed cluster is available",
	})
	return agent.Status().Patch(ctx, mc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}
