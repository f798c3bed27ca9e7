package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// hostedOnlyConfigMap is the manifest the hosted helloworld keeps on its
// managed cluster: no location annotation, so the managed cluster.
const hostedOnlyConfigMap = "helloworld-managed-side"

// testHostedAddon runs the helloworld add-on of cluster2, whose agent is
// hosted on cluster1, in Hosted mode: cluster1 joins as a managed cluster
// of its own, the add-on's template for cluster2 is the example's hosted
// one (examples/addons/helloworld/hosted), whose manifests are located on
// the hosting cluster, and the ManagedClusterAddOn names cluster1 as its
// hosting cluster. The agent
// runs as a Pod on cluster1 with the hub credential of cluster2's add-on,
// which cluster2's hosted agent wrote there, and copies cluster2's
// ConfigMaps from the hub; the other manifest lands on cluster2, in the
// add-on namespace the operator created there. Deleting the add-on removes
// the agent from cluster1.
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
	// The example's way: the hosted template for this cluster (hosted/configs.yaml).
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: helloworld,
		Annotations: map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "cluster1"}},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: []addonv1alpha1.AddOnConfig{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Name: "helloworld-hosted-0.1.0"},
		}}}}
	require.NoError(t, hub.Create(ctx, mca))

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
