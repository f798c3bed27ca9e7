package patch

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// accepted and denied are the hub's HubAcceptedManagedCluster conditions;
// joined is the agent's ManagedClusterJoined.
var (
	accepted = metav1.Condition{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonHubClusterAdminAccepted, Message: "Accepted by hub cluster admin"}
	denied = metav1.Condition{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse,
		Reason: clusterv1.ReasonHubClusterAdminDenied, Message: "Denied by hub cluster admin"}
	joined = metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedClusterJoined, Message: "Managed cluster joined"}
)

// TestPatchHelper checks on a real API server that the patch helper keeps
// what another writer added between its read and its patch, and returns a
// conflict, to be requeued, when the other writer changed what it holds.
func TestPatchHelper(t *testing.T) {
	ctx, env := hubtest.Start(t, 5*time.Minute)
	hub := env.Cluster("hub")
	admin := hub.Client()
	cfg, err := hub.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		t.Fatalf("hub controller credentials: %v", err)
	}
	controller, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatalf("hub controller client: %v", err)
	}

	t.Run("a condition another writer sets between read and patch is kept", func(t *testing.T) {
		createCluster(ctx, t, admin, "kept")
		mc := get(ctx, t, controller, "kept")
		h := patch.NewHelper(mc, controller)
		meta.SetStatusCondition(&mc.Status.Conditions, accepted)
		writeStatus(ctx, t, admin, "kept", joined) // the agent reports in meanwhile

		if err := h.Patch(ctx, mc); err != nil {
			t.Fatalf("patch: %v", err)
		}
		got := get(ctx, t, admin, "kept")
		expectConditions(t, "on the server", got, accepted, joined)
		expectConditions(t, "in the patched object", mc, accepted, joined)
		if mc.ResourceVersion != got.ResourceVersion {
			t.Errorf("patched object at resourceVersion %s, the server at %s", mc.ResourceVersion, got.ResourceVersion)
		}
	})

	t.Run("a condition both change is a conflict, done again on fresh data", func(t *testing.T) {
		createCluster(ctx, t, admin, "conflict")
		writeStatus(ctx, t, admin, "conflict", denied)
		mc := get(ctx, t, controller, "conflict")
		h := patch.NewHelper(mc, controller)
		meta.SetStatusCondition(&mc.Status.Conditions, accepted)
		writeStatus(ctx, t, admin, "conflict", joined, metav1.Condition{ // the other writer changes it too
			Type: denied.Type, Status: denied.Status, Reason: denied.Reason, Message: "Denied again"})

		err := h.Patch(ctx, mc)
		if !apierrors.IsConflict(err) {
			t.Fatalf("patch: %v, want a conflict", err)
		}
		t.Logf("conflict: %v", err)
		got := get(ctx, t, admin, "conflict")
		if c := meta.FindStatusCondition(got.Status.Conditions, denied.Type); c == nil || c.Message != "Denied again" {
			t.Errorf("the other writer's condition was overwritten: %v", c)
		}

		// The controller requeues: it reads again and decides on what it reads.
		mc = get(ctx, t, controller, "conflict")
		h = patch.NewHelper(mc, controller)
		meta.SetStatusCondition(&mc.Status.Conditions, accepted)
		if err := h.Patch(ctx, mc); err != nil {
			t.Fatalf("patch after reading again: %v", err)
		}
		expectConditions(t, "on the server", get(ctx, t, admin, "conflict"), accepted, joined)
	})

	t.Run("a finalizer another writer adds between read and patch is kept", func(t *testing.T) {
		createCluster(ctx, t, admin, "finalizers")
		mc := get(ctx, t, controller, "finalizers")
		h := patch.NewHelper(mc, controller)
		mc.Finalizers = append(mc.Finalizers, clusterv1.ManagedClusterFinalizer)
		other := get(ctx, t, admin, "finalizers")
		other.Finalizers = append(other.Finalizers, "example.com/other")
		if err := admin.Update(ctx, other); err != nil {
			t.Fatalf("other writer: %v", err)
		}

		if err := h.Patch(ctx, mc); err != nil {
			t.Fatalf("patch: %v", err)
		}
		got := get(ctx, t, admin, "finalizers")
		want := []string{clusterv1.ManagedClusterFinalizer, "example.com/other"}
		if !slices.Equal(got.Finalizers, want) {
			t.Errorf("finalizers %v, want %v", got.Finalizers, want)
		}
		got.Finalizers = nil
		if err := admin.Update(ctx, got); err != nil {
			t.Errorf("remove the finalizers: %v", err)
		}
	})
}

// createCluster creates the ManagedCluster name as the admin.
func createCluster(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("create ManagedCluster %s: %v", name, err)
	}
}

// get reads the ManagedCluster name.
func get(ctx context.Context, t *testing.T, c client.Client, name string) *clusterv1.ManagedCluster {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatalf("get ManagedCluster %s: %v", name, err)
	}
	return mc
}

// writeStatus sets conds on the ManagedCluster name as another writer.
func writeStatus(ctx context.Context, t *testing.T, c client.Client, name string, conds ...metav1.Condition) {
	t.Helper()
	mc := get(ctx, t, c, name)
	for _, cond := range conds {
		meta.SetStatusCondition(&mc.Status.Conditions, cond)
	}
	if err := c.Status().Update(ctx, mc); err != nil {
		t.Fatalf("other writer: update the status of %s: %v", name, err)
	}
}

// expectConditions checks that mc has exactly the conditions want, by type,
// status and reason.
func expectConditions(t *testing.T, where string, mc *clusterv1.ManagedCluster, want ...metav1.Condition) {
	t.Helper()
	if len(mc.Status.Conditions) != len(want) {
		t.Errorf("%s: conditions %v, want %d", where, mc.Status.Conditions, len(want))
	}
	for _, w := range want {
		if c := meta.FindStatusCondition(mc.Status.Conditions, w.Type); c == nil || c.Status != w.Status || c.Reason != w.Reason {
			t.Errorf("%s: condition %s is %v, want %s %s", where, w.Type, c, w.Status, w.Reason)
		}
	}
}
