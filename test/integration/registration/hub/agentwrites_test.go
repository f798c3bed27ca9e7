package hub

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testAgentWrites acts as cluster1's agent, which the hub's RBAC lets update
// its cluster's ManifestWorks and its own ManagedCluster: a compromised
// agent that rewrites a work's manifests would be cluster-admin wherever
// the work agent applies them, and one that drops its own taints would undo
// the administrator's quarantine. Admission lets it change a work's
// finalizers only, and none of its taints, lease duration or acceptance.
func testAgentWrites(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	agent1 := agentClient(t, hubCluster, "cluster1")
	raw, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "agent-writes"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	if err := admin.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Delete(ctx, work) }()
	framework.Eventually(ctx, t, pollTimeout, "cluster1's agent reads its work", func(ctx context.Context) (bool, error) {
		return true, agent1.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{})
	})

	// The attack: another manifest, a ClusterRoleBinding to cluster-admin.
	evil, err := json.Marshal(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "evil"}, "roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "User", "name": "evil", "apiGroup": "rbac.authorization.k8s.io"}}})
	if err != nil {
		t.Fatal(err)
	}
	editWork := func(edit func(*workv1.ManifestWork)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			w := &workv1.ManifestWork{}
			if err := agent1.Get(ctx, client.ObjectKeyFromObject(work), w); err != nil {
				return err
			}
			edit(w)
			return agent1.Update(ctx, w)
		})
	}
	editCluster := func(edit func(*clusterv1.ManagedCluster)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := agent1.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return err
			}
			edit(mc)
			return agent1.Update(ctx, mc)
		})
	}
	expectDenied(t, "cluster1's agent adds a manifest to its work", editWork(func(w *workv1.ManifestWork) {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: evil}})
	}), "may change only the finalizers of ManifestWork agent-writes")
	expectDenied(t, "cluster1's agent labels its work", editWork(func(w *workv1.ManifestWork) {
		w.Labels = map[string]string{"owner": "agent"}
	}), "may change only the finalizers")
	// What the work agent does: add its finalizer, then remove it.
	if err := editWork(func(w *workv1.ManifestWork) { controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer) }); err != nil {
		t.Fatalf("cluster1's agent adds its finalizer: %v", err)
	}
	if err := editWork(func(w *workv1.ManifestWork) { controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer) }); err != nil {
		t.Fatalf("cluster1's agent removes its finalizer: %v", err)
	}

	// Its own ManagedCluster: the administrator's taints and lease stay.
	expectDenied(t, "cluster1's agent adds a taint to itself", editCluster(func(mc *clusterv1.ManagedCluster) {
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "example.com/chosen", Effect: clusterv1.TaintEffectPreferNoSelect})
	}), "may not change its taints")
	expectDenied(t, "cluster1's agent sets its lease duration to an hour", editCluster(func(mc *clusterv1.ManagedCluster) {
		mc.Spec.LeaseDurationSeconds = 3600
	}), "may not change its taints, lease duration")
}
