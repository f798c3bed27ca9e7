package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// hostedOnlyConfigMap is the manifest the hosted helloworld keeps on its
// managed cluster: no location annotation, so the managed cluster.
const hostedOnlyConfigMap = "helloworld-managed-side"

// testHostedAddon runs the helloworld add-on of cluster2, whose agent is
// hosted on cluster1, in Hosted mode, with its hosting cluster discovered:
// cluster2's agent reports cluster1 (join --report-hosting-cluster), cluster1
// joins as a managed cluster of its own, the add-on's template for cluster2
// is the example's hosted one (examples/addons/helloworld/hosted), whose
// manifests are located on the hosting cluster, helloworld's
// ClusterManagementAddOn enables hostedModeAutoDiscovery, and the
// ManagedClusterAddOn asks for Hosted mode without naming its hosting
// cluster. Its author, a hub user who may write cluster2's add-ons and
// nothing of cluster1, may not name cluster1 by hand, and while cluster1
// and cluster2 share no ManagedClusterSet, the discovered cluster1 gets
// nothing of the add-on either, its status saying why: a hosting cluster is
// one an administrator allowed, by either rule. Once an administrator groups
// the two clusters, the hub names cluster1 and the agent runs as a Pod on
// cluster1 with the hub credential of cluster2's add-on, which cluster2's
// hosted agent wrote there, and copies cluster2's ConfigMaps from the hub;
// the other manifest lands on cluster2, in the add-on namespace the
// operator created there. Deleting the add-on removes the agent from
// cluster1.
func testHostedAddon(t *testing.T, f *fleet, initOut string) {
	ctx := t.Context()
	hub := f.env.Cluster("hub").Client()
	hosting := f.env.Cluster("cluster1").Client()
	managed := f.env.Cluster("cluster2").Client()
	ns := addonv1alpha1.DefaultAddonInstallNamespace

	token, apiserver := joinArgs(t, initOut)
	f.ocm(t, append([]string{"join", "--hub-token", token, "--hub-apiserver", apiserver, "--cluster-name", "cluster1", "--context", "cluster1"}, pinFlags(t, initOut)...)...)
	f.ocm(t, "accept", "--clusters", "cluster1", "--context", "hub", "--wait")
	framework.Eventually(ctx, t, 2*time.Minute, "cluster1 Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})

	root, err := framework.RepoRoot()
	require.NoError(t, err)
	for _, file := range []string{"hub-clusterrole.yaml", "clustermanagementaddon.yaml", "hosted/addontemplate.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", "addons", helloworld, file))
		require.NoError(t, err)
		objs, err := config.DecodeDocuments(data)
		require.NoError(t, err, file)
		if file == "hosted/addontemplate.yaml" {
			addManagedSide(t, objs)
		}
		require.NoError(t, apply.Apply(ctx, hub, objs, apply.Options{}), "apply %s", file)
	}
	// The hub administrator's opt-in, as in make demo: the example's YAML
	// stays as OCM releases before 1.4 take it.
	require.NoError(t, hub.Patch(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: helloworld}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hostedModeAutoDiscovery":{"mode":"Enable"}}}`))))

	author := addonAuthor(t, f, "cluster2")
	// The example's way: the hosted template for this cluster (hosted/configs.yaml).
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: helloworld,
		Annotations: map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "cluster1"}},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: []addonv1alpha1.AddOnConfig{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Name: "helloworld-hosted-0.1.0"},
		}}}}

	t.Run("its author may not name cluster1", func(t *testing.T) {
		// The author's RBAC may take a moment to reach the authorizer; the
		// refusal wanted is the admission policy's, which names the right.
		created := false
		framework.Eventually(ctx, t, time.Minute, "the add-on naming cluster1 refused for lack of update on ManagedCluster cluster1", func(ctx context.Context) (bool, error) {
			err := author.Create(ctx, mca.DeepCopy())
			created = err == nil
			if created || kit.ErrorSays(err, "needs the right to update ManagedCluster cluster1") {
				return true, nil
			}
			return false, err
		})
		require.False(t, created, "the author created an add-on hosted on cluster1")
	})

	delete(mca.Annotations, addonv1alpha1.HostingClusterNameAnnotationKey)
	mca.Annotations[addonv1alpha1.InstallModeAnnotationKey] = addonv1alpha1.InstallModeHosted
	require.NoError(t, author.Create(ctx, mca), "the author asks for Hosted mode without naming a cluster")

	t.Run("a discovered cluster that shares no set with cluster2 gets nothing", func(t *testing.T) {
		got := &addonv1alpha1.ManagedClusterAddOn{}
		framework.Eventually(ctx, t, 2*time.Minute, "cluster2/helloworld waiting for a ManagedClusterSet that holds cluster1 and cluster2", func(ctx context.Context) (bool, error) {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == addonv1alpha1.HostingClusterValidityReasonAutoDiscoveryPending &&
				strings.Contains(c.Message, "reports hosting cluster cluster1") && strings.Contains(c.Message, "ManagedClusterSet"), nil
		})
		assert.NotContains(t, got.Annotations, addonv1alpha1.HostingClusterNameAnnotationKey, "a hosting cluster written while the add-on waits")
		works := &workv1.ManifestWorkList{}
		require.NoError(t, hub.List(ctx, works, client.MatchingLabels{addonv1alpha1.AddonLabelKey: helloworld}))
		assert.Empty(t, works.Items, "ManifestWorks of the waiting add-on, in cluster1's namespace or cluster2's")
		err := hosting.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworldAgent}, &appsv1.Deployment{})
		assert.True(t, apierrors.IsNotFound(err), "the waiting add-on's agent on cluster1: %v", err)
	})

	// The administrator groups the two clusters: a set of the clusters
	// labeled hosting-group=cluster1, which leaves both in the default set.
	f.ocm(t, "clusterset", "create", "hosted-on-cluster1", "--cluster-selector", "hosting-group=cluster1", "--context", "hub")
	for _, name := range []string{"cluster1", "cluster2"} {
		require.NoError(t, hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"hosting-group":"cluster1"}}}`))), "label %s", name)
	}

	framework.Eventually(ctx, t, 3*time.Minute, "add-on cluster2/helloworld Available with its agent on cluster1", func(ctx context.Context) (bool, error) {
		got := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
			return false, err
		}
		for _, typ := range []string{addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied,
			addonv1alpha1.ManagedClusterAddOnConditionAvailable} {
			if !meta.IsStatusConditionTrue(got.Status.Conditions, typ) {
				return false, nil
			}
		}
		return true, nil
	})
	got := &addonv1alpha1.ManagedClusterAddOn{}
	require.NoError(t, hub.Get(ctx, client.ObjectKeyFromObject(mca), got))
	assert.Equal(t, "cluster1", got.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey], "the hosting cluster the hub named")
	assert.Equal(t, addonv1alpha1.HostingClusterNameManagedByAutoDiscoveryValue, got.Annotations[addonv1alpha1.HostingClusterNameManagedByAnnotationKey])
	require.NoError(t, hosting.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworldAgent}, &appsv1.Deployment{}), "the agent on cluster1")
	err = managed.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworldAgent}, &appsv1.Deployment{})
	assert.True(t, apierrors.IsNotFound(err), "the hosted agent on cluster2: %v", err)
	cred := &corev1.Secret{}
	require.NoError(t, hosting.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworld + "-hub-kubeconfig"}, cred),
		"the add-on's hub credential on cluster1, written by cluster2's hosted agent")
	assert.Equal(t, "cluster2", cred.Labels[clusterv1.ClusterNameLabelKey])
	err = managed.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworld + "-hub-kubeconfig"}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "a hub credential of the hosted add-on on cluster2: %v", err)
	require.NoError(t, managed.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostedOnlyConfigMap}, &corev1.ConfigMap{}),
		"the managed-side manifest on cluster2, in the add-on namespace the operator created there")

	// The agent reads cluster2's namespace on the hub with cluster2's add-on credential.
	require.NoError(t, hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: "greeting"}, Data: map[string]string{"value": "hosted"}}))
	framework.Eventually(ctx, t, 2*time.Minute, "ConfigMap greeting of cluster2 copied to cluster1 by the hosted agent", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := hosting.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeting"}, cm); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cm.Data["value"] == "hosted" && cm.Labels[copyLabel] == "cluster2", nil
	})

	require.NoError(t, hub.Delete(ctx, mca))
	waitGone(t, hub, &addonv1alpha1.ManagedClusterAddOn{}, "cluster2", helloworld)
	waitGone(t, hub, &workv1.ManifestWork{}, "cluster1", "addon-"+helloworld+"-deploy-hosting-cluster2-0")
	waitGone(t, hosting, &appsv1.Deployment{}, ns, helloworldAgent)
	waitGone(t, hub, &workv1.ManifestWork{}, "cluster2", "addon-"+helloworld+"-deploy-0")
	waitGone(t, managed, &corev1.ConfigMap{}, ns, hostedOnlyConfigMap)
}

// addManagedSide adds to the hosted helloworld template in objs a
// ConfigMap for the managed cluster (no location annotation).
func addManagedSide(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	require.Len(t, objs, 1, "the hosted template")
	obj := objs[0]
	manifests, _, err := unstructured.NestedSlice(obj.Object, "spec", "agentSpec", "workload", "manifests")
	require.NoError(t, err)
	for _, m := range manifests {
		u := &unstructured.Unstructured{Object: m.(map[string]any)}
		require.Equal(t, addonv1alpha1.HostedManifestLocationHostingValue, u.GetAnnotations()[addonv1alpha1.HostedManifestLocationAnnotationKey],
			"%s %s of the hosted template is located on the hosting cluster", u.GetKind(), u.GetName())
	}
	manifests = append(manifests, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": hostedOnlyConfigMap, "namespace": addonv1alpha1.DefaultAddonInstallNamespace},
		"data":     map[string]any{"cluster": "{{CLUSTER_NAME}}"}})
	require.NoError(t, unstructured.SetNestedSlice(obj.Object, manifests, "spec", "agentSpec", "workload", "manifests"))
}

// addonAuthor returns a client of a hub user who may read and write the
// ManagedClusterAddOns of namespace cluster and nothing else: no right on
// any ManagedCluster, so none to name a hosting cluster.
func addonAuthor(t *testing.T, f *fleet, cluster string) client.Client {
	t.Helper()
	ctx := t.Context()
	hub := f.env.Cluster("hub").Client()
	const user = "addon-author"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{addonv1alpha1.GroupVersion.Group}, Resources: []string{"managedclusteraddons"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	require.NoError(t, hub.Create(ctx, role))
	require.NoError(t, hub.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}))
	cfg, err := f.env.Cluster("hub").ConfigForUser(user)
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	require.NoError(t, err)
	return c
}
