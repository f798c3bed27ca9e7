package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/clusterprofile"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managednamespace"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestSetStatusReconcilesNoMember: a ManagedClusterSet's status (the member
// count the cluster set controller writes as each cluster joins) is read by
// neither the managed-namespace nor the ClusterProfile controller, so its
// write reconciles none of the set's members or profiles. When it did,
// every join reconciled every member of the set: quadratic registration.
func TestSetStatusReconcilesNoMember(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env := hubtest.Start(t, 3*time.Minute)
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 2,
		func(mgr ctrl.Manager) error {
			return (&managednamespace.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		},
		func(mgr ctrl.Manager) error {
			return (&clusterprofile.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		})

	const ns, setName, members = "team-s", "set-s", 8
	create(ctx, t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: setName}}
	create(ctx, t, admin, set)
	create(ctx, t, admin, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: setName},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: setName}})
	for i := range members {
		create(ctx, t, admin, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i),
			Labels: map[string]string{clusterv1beta2.ClusterSetLabel: setName}}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	}
	for i := range members {
		waitProfile(ctx, t, admin, ns, fmt.Sprintf("s%d", i), "exported", func(*multiclusterv1alpha1.ClusterProfile) bool { return true })
	}
	before := settled(ctx, t, "the controllers idle after the creations")

	meta.SetStatusCondition(&set.Status.Conditions, metav1.Condition{Type: clusterv1beta2.ManagedClusterSetConditionEmpty,
		Status: metav1.ConditionFalse, Reason: "ClustersSelected", Message: fmt.Sprintf("%d ManagedClusters selected", members)})
	if err := admin.Status().Update(ctx, set); err != nil {
		t.Fatalf("write the set's status: %v", err)
	}
	// A label on s0 reconciles s0 in both controllers: once both have,
	// and both are idle again, the set's status event has been handled.
	mc := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "s0"}, mc); err != nil {
		t.Fatal(err)
	}
	base := mc.DeepCopy()
	mc.Labels["touched"] = "yes"
	if err := admin.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "s0 reconciled by both controllers", func(context.Context) (bool, error) {
		now := reconciles(t)
		return now[0] > before[0] && now[1] > before[1], nil
	})
	after := settled(ctx, t, "the controllers idle after the status write and the label")
	for i, name := range []string{"managednamespace", "clusterprofile"} {
		if d := after[i] - before[i]; d >= members {
			t.Errorf("%s: %v reconciles after the set's status write and one member's label, want fewer than the set's %d members", name, d, members)
		}
	}
}

// settled waits until the reconcile totals stay the same for three polls in
// a row, then returns them.
func settled(ctx context.Context, t *testing.T, what string) [2]float64 {
	t.Helper()
	quiet, last := 0, reconciles(t)
	framework.Eventually(ctx, t, pollTimeout, what, func(context.Context) (bool, error) {
		now := reconciles(t)
		if now == last {
			quiet++
		} else {
			quiet, last = 0, now
		}
		return quiet >= 3, nil
	})
	return last
}

// reconciles returns controller-runtime's reconcile totals of the
// managed-namespace and ClusterProfile controllers in this process.
func reconciles(t *testing.T) [2]float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out [2]float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "controller" {
					continue
				}
				switch l.GetValue() {
				case "managednamespace":
					out[0] += m.GetCounter().GetValue()
				case "clusterprofile":
					out[1] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
