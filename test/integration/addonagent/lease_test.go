package addonagent

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// leaseSeconds is the duration of the test add-on's Lease: the agent
// declares it stale 1.5 times that after its last renewal.
const leaseSeconds = 2

// testLease walks an add-on in Lease mode through Unknown (no lease), True
// (renewed), False (renewals stopped), True again and Unknown (deleted),
// and checks that an add-on in Customized mode is left alone.
func (s *suite) testLease(ctx context.Context, t *testing.T) {
	const ns = addonv1alpha1.DefaultAddonInstallNamespace
	kit.MustCreate(ctx, t, s.spokeC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	s.createAddon(ctx, t, clusterName, "custom-health", &addonv1alpha1.ManagedClusterAddOnStatus{
		HealthCheck: addonv1alpha1.HealthCheck{Mode: addonv1alpha1.HealthCheckModeCustomized}})
	kit.MustCreate(ctx, t, s.spokeC, newLease(ns, "custom-health", time.Now()))
	s.createAddon(ctx, t, clusterName, "leasy", nil)

	c := s.waitCondition(ctx, t, "leasy", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonLeaseNotFound)
	if c.Message != "The status of leasy add-on is unknown." {
		t.Errorf("message %q, want OCM's", c.Message)
	}

	lease := newLease(ns, "leasy", time.Now())
	kit.MustCreate(ctx, t, s.spokeC, lease)
	c = s.waitCondition(ctx, t, "leasy", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonLeaseUpdated)
	if c.Message != "leasy add-on is available." {
		t.Errorf("message %q, want OCM's", c.Message)
	}

	// No renewal: the agent comes back by itself when the lease turns stale.
	stoppedAt := lease.Spec.RenewTime.Time
	c = s.waitCondition(ctx, t, "leasy", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped)
	if c.Message != "leasy add-on is not available." {
		t.Errorf("message %q, want OCM's", c.Message)
	}
	if after := c.LastTransitionTime.Sub(stoppedAt); after < leaseSeconds*time.Second {
		t.Errorf("unavailable %s after the last renewal, before one lease duration passed", after)
	}

	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: ns, Name: "leasy"}, lease); err != nil {
		t.Fatal(err)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if err := s.spokeC.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	s.waitCondition(ctx, t, "leasy", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonLeaseUpdated)

	if err := s.spokeC.Delete(ctx, lease); err != nil {
		t.Fatal(err)
	}
	s.waitCondition(ctx, t, "leasy", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonLeaseNotFound)

	// The Customized add-on was created, and reconciled, before leasy.
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: "custom-health"}, mca); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable); c != nil {
		t.Errorf("the agent set Available on an add-on in Customized mode: %+v", c)
	}
}

// newLease returns Lease name in ns renewed at renewed, of leaseSeconds.
func newLease(ns, name string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(name),
			LeaseDurationSeconds: ptr.To[int32](leaseSeconds),
			RenewTime:            &metav1.MicroTime{Time: renewed},
		},
	}
}
