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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	// helloworld is the example add-on (examples/addons/helloworld).
	helloworld = "helloworld"
	// helloworldAgent is its agent's Deployment on a managed cluster.
	helloworldAgent = "helloworld-agent"
	// copyLabel marks the agent's copies of the hub's ConfigMaps.
	copyLabel = "helloworld.addon.kubectl-ocm.io/source-namespace"
)

// TestAddon is the add-on flow on real processes: the example add-on is
// registered on the hub as its README says, enabled on two clusters with
// kubectl ocm, deployed by the hub's add-on manager through ManifestWorks,
// given a hub credential by the add-on registration of each agent, reported
// Available from its Deployment, and does its job; disabling it on one
// cluster and deleting it from the hub leave no agent behind.
func TestAddon(t *testing.T) {
	f := sharedFleet(t)
	hub := f.env.Cluster("hub").Client()
	ctx := t.Context()
	ns := addonv1alpha1.DefaultAddonInstallNamespace

	root, err := framework.RepoRoot()
	require.NoError(t, err)
	for _, file := range []string{"hub-clusterrole.yaml", "addontemplate.yaml", "clustermanagementaddon.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", "addons", helloworld, file))
		require.NoError(t, err)
		objs, err := config.DecodeDocuments(data)
		require.NoError(t, err, file)
		require.NoError(t, apply.Apply(ctx, hub, objs, apply.Options{}), "apply %s", file)
	}
	assert.Contains(t, f.ocm(t, "addon", "list", "--context", "hub"), helloworld)

	f.ocm(t, "addon", "enable", "--names", helloworld, "--clusters", "cluster1,cluster2", "--context", "hub", "--wait", "--timeout", "3m")
	for _, c := range []string{"cluster1", "cluster2"} {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Namespace: c, Name: helloworld}, mca))
		assert.True(t, meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable), "%s: %+v", c, mca.Status.Conditions)
		// Its agent runs in the add-on namespace, which warns of restricted
		// Pod Security but does not enforce it on a cluster joined with
		// defaults: the hub has nothing to check.
		ps := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnPodSecurity)
		assert.Nil(t, ps, "%s: a PodSecurity condition where the namespace enforces nothing", c)
		require.NotEmpty(t, mca.Status.Registrations, "%s: the template's registration is recorded", c)
		spoke := f.env.Cluster(c).Client()
		secret := &corev1.Secret{}
		require.NoError(t, spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworld + "-hub-kubeconfig"}, secret),
			"%s: the add-on's hub credential", c)
	}
	get := f.ocm(t, "addon", "get", helloworld, "--context", "hub")
	assert.Contains(t, get, "cluster1")
	assert.Contains(t, get, "cluster2")

	// The agent copies the ConfigMaps of its own cluster's namespace only:
	// the add-on document's ConfigMap in namespace cluster1 on the hub.
	spoke1, spoke2 := f.env.Cluster("cluster1").Client(), f.env.Cluster("cluster2").Client()
	applySeed(t, hub, "003-helloworld-configmap.yaml")
	framework.Eventually(t.Context(), t, 2*time.Minute, "ConfigMap helloworld copied to cluster1", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := spoke1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "helloworld"}, cm); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cm.Data["value"] == "helloworld" && cm.Labels[copyLabel] == "cluster1", nil
	})
	err = spoke2.Get(ctx, client.ObjectKey{Namespace: ns, Name: "helloworld"}, &corev1.ConfigMap{})
	assert.True(t, apierrors.IsNotFound(err), "cluster2 must not get cluster1's ConfigMap: %v", err)

	// Disabled on cluster2: its agent goes, cluster1's stays.
	f.ocm(t, "addon", "disable", "--names", helloworld, "--clusters", "cluster2", "--context", "hub", "--wait", "--timeout", "2m")
	waitGone(t, spoke2, &appsv1.Deployment{}, ns, helloworldAgent)
	require.NoError(t, spoke1.Get(ctx, client.ObjectKey{Namespace: ns, Name: helloworldAgent}, &appsv1.Deployment{}))

	// Deleting the add-on from the hub removes its ManagedClusterAddOns, its
	// works and the agent on every cluster.
	require.NoError(t, hub.Delete(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: helloworld}}))
	waitGone(t, hub, &addonv1alpha1.ManagedClusterAddOn{}, "cluster1", helloworld)
	waitGone(t, hub, &workv1.ManifestWork{}, "cluster1", "addon-"+helloworld+"-deploy-0")
	waitGone(t, spoke1, &appsv1.Deployment{}, ns, helloworldAgent)
}

// waitGone waits until the object ns/name of obj's kind is gone from c.
func waitGone(t *testing.T, c client.Client, obj client.Object, ns, name string) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, ns+"/"+name+" gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
