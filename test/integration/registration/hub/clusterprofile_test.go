package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/clusterprofile"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestClusterProfiles runs the ClusterProfile export as the hub controller's
// ServiceAccount and checks that the profiles of a namespace follow its set
// bindings, the sets' members and their status, and that profiles of another
// cluster manager are left alone.
func TestClusterProfiles(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env := hubtest.Start(t, 5*time.Minute)
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 2, func(mgr ctrl.Manager) error {
		return (&clusterprofile.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})

	const ns, set = "team-a", "set1"
	create(ctx, t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	create(ctx, t, admin, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})
	for name, inSet := range map[string]string{"c1": set, "c2": set, "c3": "other", "c4": set} {
		mc := &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: inSet}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, ManagedClusterClientConfigs: []clusterv1.ClientConfig{
				{URL: "https://" + name + ".example:6443", CABundle: []byte("ca of " + name)},
			}},
		}
		create(ctx, t, admin, mc)
		mc.Status = clusterv1.ManagedClusterStatus{
			Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.31.2"},
			ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: name + "-id"}},
		}
		setConditions(mc, metav1.ConditionTrue)
		if err := admin.Status().Update(ctx, mc); err != nil {
			t.Fatalf("write the status of ManagedCluster %s: %v", name, err)
		}
	}
	// A profile of another cluster manager named like a member cluster.
	foreign := &multiclusterv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2", Labels: map[string]string{multiclusterv1alpha1.LabelClusterManagerKey: "other"}},
		Spec:       multiclusterv1alpha1.ClusterProfileSpec{DisplayName: "theirs", ClusterManager: multiclusterv1alpha1.ClusterManager{Name: "other"}},
	}
	create(ctx, t, admin, foreign)
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}

	t.Run("binding the set exports its members", func(t *testing.T) {
		create(ctx, t, admin, binding)
		p := waitProfile(ctx, t, admin, ns, "c1", "exported with its status", func(p *multiclusterv1alpha1.ClusterProfile) bool {
			return healthy(p) == metav1.ConditionTrue && len(p.Status.Properties) == 1
		})
		if p.Spec.ClusterManager.Name != clusterprofile.ClusterManagerName || p.Spec.DisplayName != "c1" {
			t.Errorf("spec = %+v, want manager %s and display name c1", p.Spec, clusterprofile.ClusterManagerName)
		}
		if p.Labels[multiclusterv1alpha1.LabelClusterManagerKey] != clusterprofile.ClusterManagerName || p.Labels[multiclusterv1alpha1.LabelClusterSetKey] != set {
			t.Errorf("labels = %v, want the cluster manager and the set %s", p.Labels, set)
		}
		if p.Status.Version.Kubernetes != "v1.31.2" {
			t.Errorf("status.version = %+v, want kubernetes v1.31.2", p.Status.Version)
		}
		if got := p.Status.Properties[0]; got.Name != "id.k8s.io" || got.Value != "c1-id" {
			t.Errorf("property = %+v, want id.k8s.io=c1-id", got)
		}
		if j := meta.FindStatusCondition(p.Status.Conditions, clusterprofile.ConditionJoined); j == nil || j.Status != metav1.ConditionTrue {
			t.Errorf("Joined = %+v, want True", j)
		}
		if a := p.Status.AccessProviders; len(a) != 1 || a[0].Cluster.Server != "https://c1.example:6443" || string(a[0].Cluster.CertificateAuthorityData) != "ca of c1" {
			t.Errorf("accessProviders = %+v, want c1's client config", a)
		}
		expectNoProfile(ctx, t, admin, ns, "c3")
	})

	t.Run("a profile of another cluster manager is left alone", func(t *testing.T) {
		got := &multiclusterv1alpha1.ClusterProfile{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
			t.Fatalf("get the other manager's profile: %v", err)
		}
		if got.Spec.ClusterManager.Name != "other" || got.Spec.DisplayName != "theirs" || len(got.Status.Conditions) != 0 {
			t.Errorf("the other manager's profile was changed: %+v", got)
		}
	})

	t.Run("ControlPlaneHealthy follows the cluster's availability", func(t *testing.T) {
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "c1"}, mc); err != nil {
			t.Fatal(err)
		}
		setConditions(mc, metav1.ConditionUnknown)
		if err := admin.Status().Update(ctx, mc); err != nil {
			t.Fatalf("set c1 Unknown: %v", err)
		}
		p := waitProfile(ctx, t, admin, ns, "c1", "ControlPlaneHealthy Unknown", func(p *multiclusterv1alpha1.ClusterProfile) bool {
			return healthy(p) == metav1.ConditionUnknown
		})
		if c := meta.FindStatusCondition(p.Status.Conditions, multiclusterv1alpha1.ClusterConditionControlPlaneHealthy); c.Reason != "ManagedClusterLeaseUpdateStopped" {
			t.Errorf("ControlPlaneHealthy reason = %s, want the cluster's ManagedClusterLeaseUpdateStopped", c.Reason)
		}
	})

	t.Run("a cluster leaving the set loses its profile", func(t *testing.T) {
		relabel(ctx, t, admin, "c1", "other")
		waitGone(ctx, t, admin, ns, "c1")
		relabel(ctx, t, admin, "c1", set)
		waitProfile(ctx, t, admin, ns, "c1", "exported again", func(*multiclusterv1alpha1.ClusterProfile) bool { return true })
	})

	t.Run("deleting the cluster removes its profile", func(t *testing.T) {
		if err := admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}); err != nil {
			t.Fatalf("delete ManagedCluster c1: %v", err)
		}
		waitGone(ctx, t, admin, ns, "c1")
		waitProfile(ctx, t, admin, ns, "c4", "still exported", func(*multiclusterv1alpha1.ClusterProfile) bool { return true })
	})

	t.Run("unbinding the set removes the profiles", func(t *testing.T) {
		if err := admin.Delete(ctx, binding); err != nil {
			t.Fatalf("delete the binding: %v", err)
		}
		waitGone(ctx, t, admin, ns, "c4")
		if err := admin.Get(ctx, client.ObjectKeyFromObject(foreign), &multiclusterv1alpha1.ClusterProfile{}); err != nil {
			t.Errorf("the other manager's profile after unbinding: %v", err)
		}
	})
}

// create creates obj as c's user.
func create(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// setConditions sets the cluster's Joined condition True and its Available
// condition to status, with the reasons the hub and the agent write.
func setConditions(mc *clusterv1.ManagedCluster, status metav1.ConditionStatus) {
	reason := map[metav1.ConditionStatus]string{
		metav1.ConditionTrue: "ManagedClusterAvailable", metav1.ConditionUnknown: "ManagedClusterLeaseUpdateStopped",
	}[status]
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined"})
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: reason})
}

// relabel moves the ManagedCluster name into set.
func relabel(ctx context.Context, t *testing.T, c client.Client, name, set string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	base := mc.DeepCopy()
	mc.Labels[clusterv1beta2.ClusterSetLabel] = set
	if err := c.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatalf("move %s into set %s: %v", name, set, err)
	}
}

// healthy returns the status of the profile's ControlPlaneHealthy condition.
func healthy(p *multiclusterv1alpha1.ClusterProfile) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(p.Status.Conditions, multiclusterv1alpha1.ClusterConditionControlPlaneHealthy); c != nil {
		return c.Status
	}
	return ""
}

// waitProfile waits until the profile ns/name exists and satisfies ok.
func waitProfile(ctx context.Context, t *testing.T, c client.Client, ns, name, what string, ok func(*multiclusterv1alpha1.ClusterProfile) bool) *multiclusterv1alpha1.ClusterProfile {
	t.Helper()
	p := &multiclusterv1alpha1.ClusterProfile{}
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("ClusterProfile %s/%s: %s", ns, name, what), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(p), nil
	})
	return p
}

// waitGone waits until the profile ns/name is deleted.
func waitGone(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("ClusterProfile %s/%s deleted", ns, name), func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &multiclusterv1alpha1.ClusterProfile{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// expectNoProfile fails t if the profile ns/name exists.
func expectNoProfile(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &multiclusterv1alpha1.ClusterProfile{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ClusterProfile %s/%s of a cluster outside the bound sets: got %v, want NotFound", ns, name, err)
	}
}
