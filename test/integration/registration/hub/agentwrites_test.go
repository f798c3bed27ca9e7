package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testAgentWrites acts as cluster1's agent. Whoever writes a cluster's
// ManifestWorks is cluster-admin wherever the work agent applies them, and
// an agent that changes its own ManagedCluster's taints, labels or client
// configs undoes the administrator's quarantine, attracts other teams'
// workloads, or redirects the cluster's consumers. The shipped RBAC lets the
// agent update its works (for finalizers) and only the status of its
// ManagedCluster; admission lets every identity the hub issues to a managed
// cluster change a work's finalizers only, and nothing of a ManagedCluster
// but its status, whatever subject form its certificate has and even where
// RBAC would allow more.
func testAgentWrites(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
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

	// The shipped RBAC: the agent reads its ManagedCluster and may not
	// update it at all.
	agent1 := agentClient(t, hubCluster, "cluster1")
	framework.Eventually(ctx, t, pollTimeout, "cluster1's agent reads its work", func(ctx context.Context) (bool, error) {
		return true, agent1.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{})
	})
	err = editCluster(ctx, agent1, func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "prod" })
	assert.True(t, apierrors.IsForbidden(err), "cluster1's agent relabels its ManagedCluster: got %v, want RBAC to forbid the update", err)
	assert.ErrorContains(t, err, `cannot update resource "managedclusters"`)

	// Every subject form of an identity issued to cluster1, each also
	// granted update on works and ManagedClusters by RBAC, so that only
	// admission stands in the way.
	// ownAgent: the form is cluster1's agent (identity.IsAgentOf), which
	// writes cluster1's status.
	forms := []struct {
		name     string
		user     string
		groups   []string
		ownAgent bool
	}{
		{"its certificate", agentUser("cluster1"), identity.AgentGroups("cluster1"), true},
		{"a certificate in its cluster's group only", agentUser("cluster1"), []string{identity.ClusterGroup("cluster1")}, true},
		{"a certificate with its user name and no group", agentUser("cluster1"), nil, true},
		{"another user name in its cluster's group", "evil", []string{identity.ClusterGroup("cluster1")}, true},
		{"its token identity", identity.AgentTokenUserName("cluster1"), []string{"system:serviceaccounts", "system:serviceaccounts:" + identity.AgentTokenNamespace}, true},
		{"an add-on agent's certificate", identity.AddonUserName("cluster1", "helloworld", "agent1"), identity.AddonDefaultGroups("cluster1", "helloworld"), false},
	}
	evil, err := json.Marshal(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "evil"}, "roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "User", "name": "evil", "apiGroup": "rbac.authorization.k8s.io"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			grantUser(ctx, t, admin, fmt.Sprintf("agent-writes-%d", i), form.user, rbacv1.PolicyRule{
				APIGroups: []string{workv1.GroupVersion.Group, clusterv1.GroupVersion.Group}, Resources: []string{"manifestworks", "managedclusters", "managedclusters/status"},
				Verbs: []string{"get", "update", "patch"},
			})
			cfg, err := hubCluster.ConfigForUser(form.user, form.groups...)
			c := clientFor(t, cfg, err)
			editWork := func(edit func(*workv1.ManifestWork)) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					w := &workv1.ManifestWork{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(work), w); err != nil {
						return err
					}
					edit(w)
					return c.Update(ctx, w)
				})
			}
			framework.Eventually(ctx, t, pollTimeout, "the grant reaches the authorizer", func(ctx context.Context) (bool, error) {
				return true, c.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{})
			})
			expectDenied(t, "it adds a cluster-admin binding to the work", editWork(func(w *workv1.ManifestWork) {
				w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: evil}})
			}), "may change only the finalizers of ManifestWork agent-writes")
			expectDenied(t, "it labels the work", editWork(func(w *workv1.ManifestWork) {
				w.Labels = map[string]string{"owner": "agent"}
			}), "may change only the finalizers")
			// What the work agent does: add its finalizer, then remove it.
			if err := editWork(func(w *workv1.ManifestWork) { controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer) }); err != nil {
				t.Fatalf("it adds the work agent's finalizer: %v", err)
			}
			if err := editWork(func(w *workv1.ManifestWork) { controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer) }); err != nil {
				t.Fatalf("it removes the work agent's finalizer: %v", err)
			}

			const hint = "may change only the status of ManagedCluster cluster1"
			for what, edit := range map[string]func(*clusterv1.ManagedCluster){
				"drops its taints": func(mc *clusterv1.ManagedCluster) { mc.Spec.Taints = nil },
				"adds a taint": func(mc *clusterv1.ManagedCluster) {
					mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "example.com/chosen", Effect: clusterv1.TaintEffectPreferNoSelect})
				},
				"sets its lease duration to an hour": func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 3600 },
				"labels itself for a Placement":      func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "prod" },
				"annotates itself": func(mc *clusterv1.ManagedCluster) {
					metav1.SetMetaDataAnnotation(&mc.ObjectMeta, "example.com/team", "b")
				},
				"redirects its client configs": func(mc *clusterv1.ManagedCluster) {
					mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://attacker.example:6443"}}
				},
			} {
				expectDenied(t, "it "+what, editCluster(ctx, c, edit), hint)
			}
			// Status: RBAC lets every agent write every ManagedCluster's
			// (the agents' shared ClusterRole, granted here to each form);
			// admission lets only the cluster's own agent write its own.
			status := func(cluster string) error {
				mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
				return c.Status().Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`)), client.DryRunAll)
			}
			expectDenied(t, "it writes cluster2's status", status("cluster2"), "may not write the status of ManagedCluster cluster2")
			if form.ownAgent {
				expectAllowed(t, "it writes its own status", status("cluster1"))
			} else {
				expectDenied(t, "it writes cluster1's status", status("cluster1"), "may not write the status of ManagedCluster cluster1")
			}
			// The Cluster API annotation has a policy of its own too,
			// whichever the API server reports.
			expectDenied(t, "it annotates itself with a Cluster API cluster", editCluster(ctx, c, func(mc *clusterv1.ManagedCluster) {
				metav1.SetMetaDataAnnotation(&mc.ObjectMeta, importer.CAPIAnnotation, "team-b/prod")
			}), "ManagedCluster cluster1")
		})
	}
}

// editCluster applies edit to ManagedCluster cluster1 as c's user.
func editCluster(ctx context.Context, c client.Client, edit func(*clusterv1.ManagedCluster)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return err
		}
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		edit(mc)
		return c.Update(ctx, mc)
	})
}

// grantUser gives user the rule through a ClusterRole and binding named
// name, removed when the test ends.
func grantUser(ctx context.Context, t *testing.T, admin client.Client, name, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.WithoutCancel(ctx), obj) })
	}
}

// testRegistrantAnnotations creates ManagedClusters as each identity that
// registers clusters. Annotations other than OCM's agent annotations record
// what the hub decided (automatic acceptance, the agent's key) or point the
// importer at a Cluster API cluster: none of them may set one.
func testRegistrantAnnotations(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	registrants := []struct {
		name   string
		user   string
		groups []string
	}{
		{"the shared bootstrap ServiceAccount", identity.BootstrapUser, []string{"system:serviceaccounts", "system:serviceaccounts:" + identity.BootstrapNamespace}},
		{"a bootstrap token", identity.BootstrapTokenUserPrefix + "abcdef", []string{identity.BootstrapTokenGroup}},
		{"a bootstrap token without its group", identity.BootstrapTokenUserPrefix + "abcdef", nil},
		{"cluster1's agent", agentUser("cluster1"), identity.AgentGroups("cluster1")},
	}
	for i, r := range registrants {
		t.Run(r.name, func(t *testing.T) {
			grantUser(ctx, t, admin, fmt.Sprintf("registrant-%d", i), r.user, rbacv1.PolicyRule{
				APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"create"},
			})
			cfg, err := hubCluster.ConfigForUser(r.user, r.groups...)
			c := clientFor(t, cfg, err)
			name := fmt.Sprintf("registrant-%d", i)
			for _, key := range []string{
				importer.CAPIAnnotation,
				clusterv1.AutomaticallyAcceptedOnAnnotationKey,
				clusterv1.AgentKeyAnnotationKey,
				clusterv1.AutomaticallyAcceptedForAnnotationKey,
				"kubectl-ocm.io/anything",
			} {
				mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{key: "x"}}}
				var err error
				framework.Eventually(ctx, t, pollTimeout, "the grant reaches the authorizer", func(ctx context.Context) (bool, error) {
					err = c.Create(ctx, mc)
					return !apierrors.IsForbidden(err) || !kit.ErrorSays(err, "cannot create resource"), nil
				})
				hint := "with annotations under " + identity.RegistrantAnnotationPrefix + " only, not " + key
				if key == importer.CAPIAnnotation {
					// Refused by the Cluster API annotation's own policy
					// too, whichever the API server reports.
					hint = "ManagedCluster " + name
				}
				expectDenied(t, "it creates a ManagedCluster annotated "+key, err, hint)
			}
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name,
				Annotations: map[string]string{identity.RegistrantAnnotationPrefix + "site": "lab"}}}
			if err := c.Create(ctx, mc); err != nil {
				t.Fatalf("it creates a ManagedCluster with an agent annotation: %v", err)
			}
			t.Cleanup(func() { _ = admin.Delete(context.WithoutCancel(ctx), mc) })
		})
	}
}
