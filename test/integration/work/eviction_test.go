package work

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testEviction checks that AppliedManifestWorks whose ManifestWork is gone
// from the hub are evicted after the grace period with the objects they own:
// one left by another hub, one whose work was deleted while the agent was
// stopped; and that a work that comes back in time keeps its record.
func (s *suite) testEviction(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "ev-gone", configMap("default", "ev-gone", "1")))
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "ev-back", configMap("default", "ev-back", "1")))
	s.waitWorkCondition(ctx, t, "ev-gone", workv1.WorkApplied, metav1.ConditionTrue)
	s.waitWorkCondition(ctx, t, "ev-back", workv1.WorkApplied, metav1.ConditionTrue)
	back, err := s.appliedWork(ctx, "ev-back")
	if err != nil {
		t.Fatal(err)
	}
	backCM, err := s.configMap(ctx, "default", "ev-back")
	if err != nil {
		t.Fatal(err)
	}

	// A record of the same agent from its previous hub, owning a ConfigMap.
	foreign := s.foreignAppliedWork(ctx, t, back.Spec.AgentID)

	// Both works vanish from the hub while the agent is stopped (their
	// finalizer is removed by someone else).
	s.stop()
	for _, name := range []string{"ev-gone", "ev-back"} {
		w, err := s.getWork(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		w.Finalizers = nil
		if err := s.hubC.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		if err := s.hubC.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, w)
	}
	s.startAgent()

	t.Run("a work that comes back cancels the eviction", func(t *testing.T) {
		framework.Eventually(ctx, t, pollTimeout, "evictionStartTime on ev-back's record", func(ctx context.Context) (bool, error) {
			amw, err := s.appliedWork(ctx, "ev-back")
			return err == nil && amw.Status.EvictionStartTime != nil, err
		})
		kit.MustCreate(ctx, t, s.hubC, newWork(t, "ev-back", configMap("default", "ev-back", "1")))
		framework.Eventually(ctx, t, pollTimeout, "evictionStartTime cleared", func(ctx context.Context) (bool, error) {
			amw, err := s.appliedWork(ctx, "ev-back")
			return err == nil && amw.Status.EvictionStartTime == nil, err
		})
		s.waitWorkCondition(ctx, t, "ev-back", workv1.WorkApplied, metav1.ConditionTrue)
	})

	t.Run("records of works gone are evicted with their objects", func(t *testing.T) {
		amw, err := s.appliedWork(ctx, "ev-gone")
		if err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.spokeC, amw)
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ev-gone"}})
		waitGone(ctx, t, s.spokeC, foreign)
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ev-foreign"}})
	})

	t.Run("the record of the work that came back is kept", func(t *testing.T) {
		amw, err := s.appliedWork(ctx, "ev-back")
		if err != nil || amw.UID != back.UID {
			t.Fatalf("ev-back's record after the grace period: %v (uid %s, was %s)", err, amw.UID, back.UID)
		}
		cm, err := s.configMap(ctx, "default", "ev-back")
		if err != nil || cm.UID != backCM.UID {
			t.Fatalf("ev-back's ConfigMap: %v", err)
		}
	})

	t.Run("cleanup", func(t *testing.T) {
		w, err := s.getWork(ctx, "ev-back")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.hubC.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, w)
	})
}

// foreignAppliedWork creates, as the previous hub's agent would have, an
// AppliedManifestWork of agentID for another hub, owning ConfigMap
// default/ev-foreign.
func (s *suite) foreignAppliedWork(ctx context.Context, t *testing.T, agentID string) *workv1.AppliedManifestWork {
	t.Helper()
	otherHash := strings.Repeat("0", 64)
	amw := &workv1.AppliedManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: workv1.AppliedManifestWorkName(otherHash, "old"), Finalizers: []string{workv1.AppliedManifestWorkFinalizer}},
		Spec:       workv1.AppliedManifestWorkSpec{HubHash: otherHash, AgentID: agentID, ManifestWorkName: "old"},
	}
	kit.MustCreate(ctx, t, s.spokeC, amw)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ev-foreign",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: workv1.GroupVersion.String(), Kind: "AppliedManifestWork",
			Name: amw.Name, UID: amw.UID, BlockOwnerDeletion: ptr.To(false)}}}}
	kit.MustCreate(ctx, t, s.spokeC, cm)
	base := amw.DeepCopy()
	amw.Status.AppliedResources = []workv1.AppliedManifestResourceMeta{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "default", Name: "ev-foreign"},
		Version:            "v1", UID: string(cm.UID),
	}}
	if err := s.spokeC.Status().Patch(ctx, amw, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	return amw
}
