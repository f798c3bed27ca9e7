package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testHostedMode joins cluster2 with its agent hosted on cluster1: the agent,
// its Secrets and its Klusterlet live on cluster1, and cluster2 gets only the
// managed-cluster CRDs, and cluster2's ManifestWorks apply to cluster2. The
// agent reports cluster1 as its hosting cluster, where cluster2's add-on
// then runs.
func testHostedMode(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1", "cluster2")
	hub := f.env.Cluster("hub").Client()
	hosting := f.env.Cluster("cluster1").Client()
	managed := f.env.Cluster("cluster2").Client()
	ctx := t.Context()
	ns := config.HostedKlusterletName("cluster2")

	initOut := f.hubInit(t)
	token, apiserver := joinArgs(t, initOut)
	pin := pinFlags(t, initOut)[1]
	join := func(kubeconfig string) (string, error) {
		return f.tryOCM(t, "join", "--hub-token", token, "--hub-apiserver", apiserver, "--ca-cert-hash", pin, "--cluster-name", "cluster2",
			"--mode", "hosted", "--managed-cluster-kubeconfig", kubeconfig, "--context", "cluster1",
			"--report-hosting-cluster", "--management-cluster-name", "cluster1")
	}

	t.Run("preflight refuses a managed cluster that does not answer, installing nothing", func(t *testing.T) {
		dead := filepath.Join(t.TempDir(), "dead.kubeconfig")
		cfg := f.env.Cluster("cluster2").RESTConfig()
		cfg.Host = "https://127.0.0.1:1"
		require.NoError(t, framework.WriteKubeconfig(dead, "dead", cfg))
		out, err := join(dead)
		require.Error(t, err)
		assert.Contains(t, out, "does not answer")
		_, err = join(filepath.Join(t.TempDir(), "missing"))
		require.Error(t, err)
		_, err = f.env.Cluster("cluster1").Clientset().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "namespace %s on cluster1 after failed preflights: %v", ns, err)
	})

	kubeconfig := filepath.Join(t.TempDir(), "cluster2.kubeconfig")
	require.NoError(t, framework.WriteKubeconfig(kubeconfig, "cluster2", f.env.Cluster("cluster2").RESTConfig()))
	out, err := join(kubeconfig)
	require.NoError(t, err, out)
	f.ocm(t, "accept", "--clusters", "cluster2", "--context", "hub", "--wait")

	framework.Eventually(t.Context(), t, 2*time.Minute, "cluster2 Joined and Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster2"}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})

	t.Run("the agent reports on its Klusterlet on the hosting cluster", func(t *testing.T) {
		framework.Eventually(t.Context(), t, time.Minute, "Klusterlet "+ns+" Available on cluster1", func(ctx context.Context) (bool, error) {
			k := &operatorv1.Klusterlet{}
			if err := hosting.Get(ctx, client.ObjectKey{Name: ns}, k); err != nil {
				return false, err
			}
			return k.Spec.DeployOption.Mode == operatorv1.InstallModeHosted &&
				meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1.ConditionKlusterletAvailable), nil
		})
	})

	t.Run("a ClusterClaim on the managed cluster, and the hosting cluster the agent reports, reach the hub", func(t *testing.T) {
		claim := &clusterv1alpha1.ClusterClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "region.open-cluster-management.io"},
			Spec:       clusterv1alpha1.ClusterClaimSpec{Value: "eu-west-2"},
		}
		require.NoError(t, managed.Create(ctx, claim))
		framework.Eventually(t.Context(), t, time.Minute, "claims region=eu-west-2 and hosting-cluster=cluster1 in cluster2's status", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster2"}, mc); err != nil {
				return false, err
			}
			found := 0
			for _, c := range mc.Status.ClusterClaims {
				if (c.Name == claim.Name && c.Value == "eu-west-2") || (c.Name == clusterv1alpha1.ClusterClaimHostingCluster && c.Value == "cluster1") {
					found++
				}
			}
			return found == 2, nil
		})
	})

	t.Run("nothing of the agent is on the managed cluster but the CRDs and the add-on namespace", func(t *testing.T) {
		sel := client.MatchingLabels{apply.PartOfLabelKey: apply.PartOfLabelValue}
		namespaces := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NamespaceList"}}
		framework.Eventually(ctx, t, time.Minute, "the add-on namespace on cluster2, created by the operator", func(ctx context.Context) (bool, error) {
			if err := managed.List(ctx, namespaces, sel); err != nil {
				return false, err
			}
			return len(namespaces.Items) == 1 && namespaces.Items[0].Name == addonv1alpha1.DefaultAddonInstallNamespace &&
				namespaces.Items[0].Labels[addonv1alpha1.InstallNamespaceLabelKey] == "true", nil
		})
		for _, list := range []client.ObjectList{
			&metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DeploymentList"}},
			&metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}},
			&metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleList"}},
		} {
			require.NoError(t, managed.List(ctx, list, sel))
			assert.Empty(t, list.(*metav1.PartialObjectMetadataList).Items, "%s labeled %s on cluster2", list.GetObjectKind().GroupVersionKind().Kind, apply.PartOfLabelKey)
		}
		for name, want := range map[string]bool{
			config.ClusterClaimsCRDName:        true,
			config.AppliedManifestWorksCRDName: true,
			config.KlusterletsCRDName:          false,
		} {
			err := managed.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
			if want {
				assert.NoError(t, err, "CRD %s on cluster2", name)
			} else {
				assert.True(t, apierrors.IsNotFound(err), "CRD %s on cluster2: %v", name, err)
			}
		}
	})

	t.Run("a ManifestWork applies to the managed cluster, not the hosting one", func(t *testing.T) {
		const cmName = "hosted-work-cm"
		cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + cmName + `","namespace":"default"},"data":{"from":"hub"}}`
		mw := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: "hosted-work"},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(cm)}},
			}}},
		}
		require.NoError(t, hub.Create(ctx, mw))
		framework.Eventually(t.Context(), t, time.Minute, "ManifestWork cluster2/hosted-work Applied", func(ctx context.Context) (bool, error) {
			got := &workv1.ManifestWork{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(mw), got); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(got.Status.Conditions, workv1.WorkApplied), nil
		})
		key := client.ObjectKey{Namespace: "default", Name: cmName}
		got := &corev1.ConfigMap{}
		require.NoError(t, managed.Get(ctx, key, got), "the work's ConfigMap on cluster2")
		assert.Equal(t, "hub", got.Data["from"])
		err := hosting.Get(ctx, key, &corev1.ConfigMap{})
		assert.True(t, apierrors.IsNotFound(err), "the work's ConfigMap on the hosting cluster1: %v", err)

		require.NoError(t, hub.Delete(ctx, mw))
		framework.Eventually(t.Context(), t, time.Minute, "the work's ConfigMap gone from cluster2", func(ctx context.Context) (bool, error) {
			err := managed.Get(ctx, key, &corev1.ConfigMap{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		framework.Eventually(t.Context(), t, time.Minute, "ManifestWork cluster2/hosted-work deleted on the hub", func(ctx context.Context) (bool, error) {
			err := hub.Get(ctx, client.ObjectKeyFromObject(mw), &workv1.ManifestWork{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})

	t.Run("a hosted add-on runs its agent on the hosting cluster", func(t *testing.T) { testHostedAddon(t, f, initOut) })

	t.Run("unjoin removes the hosted agent from the hosting cluster", func(t *testing.T) {
		out := f.ocm(t, "unjoin", "--cluster-name", "cluster2", "--mode", "hosted", "--context", "cluster1", "--managed-cluster-kubeconfig", kubeconfig)
		// cluster1, joined as a managed cluster of its own, keeps its CRDs too.
		assert.Regexp(t, `Kept CRDs still in use: [^\n]*`+regexp.QuoteMeta(config.ClusterClaimsCRDName), out, "the claim keeps its CRD")
		_, err := f.env.Cluster("cluster1").Clientset().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "namespace %s still on cluster1: %v", ns, err)
		err = hosting.Get(ctx, client.ObjectKey{Name: ns}, &operatorv1.Klusterlet{})
		assert.True(t, apierrors.IsNotFound(err) || meta.IsNoMatchError(err), "Klusterlet %s still on cluster1: %v", ns, err)
		err = managed.Get(ctx, client.ObjectKey{Name: config.AppliedManifestWorksCRDName}, &apiextensionsv1.CustomResourceDefinition{})
		assert.True(t, apierrors.IsNotFound(err), "unused CRD %s still on cluster2: %v", config.AppliedManifestWorksCRDName, err)
		framework.Eventually(ctx, t, time.Minute, "the add-on namespace removed from cluster2", func(ctx context.Context) (bool, error) {
			got := &corev1.Namespace{}
			err := managed.Get(ctx, client.ObjectKey{Name: addonv1alpha1.DefaultAddonInstallNamespace}, got)
			return apierrors.IsNotFound(err) || (err == nil && !got.DeletionTimestamp.IsZero()), client.IgnoreNotFound(err)
		})
	})
}
