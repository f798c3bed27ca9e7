package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestOCMShapedAddonRuns installs, on the shared fleet's hub installed with
// defaults, an add-on shaped as OCM's addon-framework examples are
// (examples/addons/hellomanager/ocm-shaped.yaml): its manager in namespace
// open-cluster-management and its agent in the add-on agents' namespace,
// neither with a securityContext. Both namespaces warn and audit at
// restricted without enforcing it, so the manager runs on the hub and,
// once the add-on is enabled, its agent runs on cluster1; each cluster's
// agent reports the level its add-on namespace enforces.
func TestOCMShapedAddonRuns(t *testing.T) {
	f := sharedFleet(t)
	hub := f.env.Cluster("hub").Client()
	spoke := f.env.Cluster("cluster1").Client()
	ctx := t.Context()
	const name = "ocm-shaped"
	agentNS := addonv1alpha1.DefaultAddonInstallNamespace

	root, err := framework.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "examples", "addons", "hellomanager", name+".yaml"))
	require.NoError(t, err)
	objs, err := config.DecodeDocuments(data)
	require.NoError(t, err)
	// Put the shared fleet back as it was: the add-on and its agent gone,
	// then its manager. Deferred rather than a cleanup, while t's context
	// still lives.
	defer func() {
		if err := hub.Delete(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete the add-on %s: %v", name, err)
		}
		waitGone(t, hub, &addonv1alpha1.ManagedClusterAddOn{}, "cluster1", name)
		waitGone(t, spoke, &appsv1.Deployment{}, agentNS, name+"-agent")
		if err := apply.Delete(ctx, hub, objs); err != nil {
			t.Errorf("delete the add-on's manager: %v", err)
		}
	}()
	require.NoError(t, apply.Apply(ctx, hub, objs, apply.Options{}))

	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		dep := &appsv1.Deployment{}
		require.NoError(t, hub.Get(ctx, client.ObjectKeyFromObject(obj), dep))
		assert.NotEmpty(t, podsecurity.Check(&dep.Spec.Template.ObjectMeta, &dep.Spec.Template.Spec),
			"the manager's Pod must not meet restricted, as OCM's examples' do not")
	}
	waitDeploymentAvailable(t, hub, operatorv1.OperatorNamespace, name+"-manager")

	f.ocm(t, "addon", "enable", "--names", name, "--clusters", "cluster1", "--context", "hub", "--wait", "--timeout", "3m")
	waitDeploymentAvailable(t, spoke, agentNS, name+"-agent")
	agent := &appsv1.Deployment{}
	require.NoError(t, spoke.Get(ctx, client.ObjectKey{Namespace: agentNS, Name: name + "-agent"}, agent))
	assert.Nil(t, agent.Spec.Template.Spec.Containers[0].SecurityContext, "the agent runs without a securityContext")
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	require.NoError(t, hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: name}, mca))
	assert.True(t, meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable), "%+v", mca.Status.Conditions)

	// The namespaces warn: the API server records each Pod restricted
	// would refuse, without refusing it.
	assertSharedNamespaces(t, hub, operatorv1.OperatorNamespace)
	assertSharedNamespaces(t, spoke, agentNS)
	for _, c := range []string{"cluster1", "cluster2"} {
		mc := &clusterv1.ManagedCluster{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: c}, mc))
		i := slices.IndexFunc(mc.Status.ClusterClaims, func(cl clusterv1.ManagedClusterClaim) bool { return cl.Name == podsecurity.AddonNamespaceClaim })
		if assert.GreaterOrEqual(t, i, 0, "%s reports no claim %s: %+v", c, podsecurity.AddonNamespaceClaim, mc.Status.ClusterClaims) {
			assert.Equal(t, "privileged", mc.Status.ClusterClaims[i].Value, "%s: the add-on namespace enforces no level", c)
		}
	}
	pods := &corev1.PodList{}
	require.NoError(t, hub.List(ctx, pods, client.InNamespace(operatorv1.OperatorNamespace), client.MatchingLabels{"app": name + "-manager"}))
	assert.NotEmpty(t, pods.Items, "the manager's Pod was admitted in %s", operatorv1.OperatorNamespace)
}
