package e2e

import (
	"context"
	"io"
	"regexp"
	"slices"
	"strings"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

var (
	tokenRE     = regexp.MustCompile(`--hub-token[= ](\S+)`)
	apiserverRE = regexp.MustCompile(`--hub-apiserver[= ](\S+)`)
	pinRE       = regexp.MustCompile(`--ca-cert-hash[= ](sha256:[0-9a-fA-F]+)`)
)

// joinArgs extracts the hub token and API server from the join command that
// `hub init` and `hub token` print.
func joinArgs(t *testing.T, out string) (token, apiserver string) {
	t.Helper()
	tm, am := tokenRE.FindStringSubmatch(out), apiserverRE.FindStringSubmatch(out)
	require.NotNil(t, tm, "no --hub-token in:\n%s", out)
	require.NotNil(t, am, "no --hub-apiserver in:\n%s", out)
	return tm[1], am[1]
}

// pinFlags returns the --ca-cert-hash flags of the join command that `hub
// init` and `hub token` print: join verifies the hub against them.
func pinFlags(t *testing.T, out string) []string {
	t.Helper()
	var flags []string
	for _, m := range pinRE.FindAllStringSubmatch(out, -1) {
		flags = append(flags, "--ca-cert-hash", m[1])
	}
	require.NotEmpty(t, flags, "no --ca-cert-hash in:\n%s", out)
	return flags
}

// TestRegistration is the getting-started flow: hub init, join two clusters,
// accept them, and see them Joined and Available; then the seed examples of
// the ManagedCluster document behave as it says.
func TestRegistration(t *testing.T) {
	f := sharedFleet(t)
	hub := f.env.Cluster("hub").Client()
	ctx := t.Context()

	// The flow ran as the shared fleet started: hub init printed the hub's
	// URL, and get clusters showed both clusters accepted.
	assert.Equal(t, f.env.Cluster("hub").Server(), shared.apiserver)
	assert.NotEqual(t, shared.tokens["cluster1"], shared.tokens["cluster2"], "cluster2 joined with a token of its own")
	for _, c := range []string{"cluster1", "cluster2"} {
		assert.Regexp(t, `(?m)^`+c+`\s+true\s+`, shared.getClusters, "get clusters shows %s accepted", c)
	}

	t.Run("a ClusterClaim on the managed cluster reaches the hub", func(t *testing.T) {
		applySeed(t, f.env.Cluster("cluster1").Client(), "004-clusterclaim.yaml")
		framework.Eventually(t.Context(), t, time.Minute, "claim platform.open-cluster-management.io=aws in cluster1's status", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			for _, claim := range mc.Status.ClusterClaims {
				if claim.Name == "platform.open-cluster-management.io" && claim.Value == "aws" {
					return true, nil
				}
			}
			return false, nil
		})
	})

	t.Run("the seed ManifestWork creates its Pod on cluster1", func(t *testing.T) {
		applySeed(t, hub, "001-manifestwork-mw-01.yaml")
		framework.Eventually(t.Context(), t, time.Minute, "ManifestWork cluster1/mw-01 Applied", func(ctx context.Context) (bool, error) {
			mw := &workv1.ManifestWork{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "mw-01"}, mw); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied), nil
		})
		pod, err := f.env.Cluster("cluster1").Clientset().CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		require.NoError(t, err, "the work's Pod on cluster1")
		assert.Equal(t, "busybox", pod.Spec.Containers[0].Image)
	})

	t.Run("a stopped agent is detected and a restarted one recovers", func(t *testing.T) {
		// A short lease keeps the test quick; the hub's grace is 1.5 leases.
		mc := &clusterv1.ManagedCluster{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc))
		base := mc.DeepCopy()
		mc.Spec.LeaseDurationSeconds = 4
		require.NoError(t, hub.Patch(ctx, mc, client.MergeFrom(base)))
		defer func() {
			// The shared fleet's lease again.
			now := &clusterv1.ManagedCluster{}
			require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, now))
			patched := now.DeepCopy()
			patched.Spec.LeaseDurationSeconds = base.Spec.LeaseDurationSeconds
			require.NoError(t, hub.Patch(ctx, patched, client.MergeFrom(now)))
		}()

		scaleAgent(t, f.env.Cluster("cluster1").Client(), 0)
		framework.Eventually(t.Context(), t, time.Minute, "cluster1 Available Unknown with the unreachable taint", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			return cond != nil && cond.Status == metav1.ConditionUnknown && hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), nil
		})
		scaleAgent(t, f.env.Cluster("cluster1").Client(), 1)
		framework.Eventually(t.Context(), t, time.Minute, "cluster1 Available again, without the taint", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) && !hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), nil
		})
	})

	t.Run("the accepted cluster got its namespace on the hub", func(t *testing.T) {
		for _, c := range []string{"cluster1", "cluster2"} {
			ns := &unstructured.Unstructured{}
			ns.SetAPIVersion("v1")
			ns.SetKind("Namespace")
			require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: c}, ns))
		}
	})

	t.Run("the product's namespaces enforce restricted and its Pods run; those shared with OCM's add-ons warn", func(t *testing.T) {
		// The hub controller and its operator; the agent and the Klusterlet
		// operator on each cluster. The operator's namespace on the hub
		// and the add-on agents' on each cluster are shared with OCM's
		// add-ons.
		running := assertSharedNamespaces(t, hub, operatorv1.OperatorNamespace)
		running += assertRestrictedNamespaces(t, hub, config.HubNamespace, identity.AgentTokenNamespace, "cluster1", "cluster2")
		assert.GreaterOrEqual(t, running, 2, "Pods running in the hub's namespaces")
		for _, c := range []string{"cluster1", "cluster2"} {
			spoke := f.env.Cluster(c).Client()
			running := assertRestrictedNamespaces(t, spoke, operatorv1.OperatorNamespace, config.AgentNamespace)
			running += assertSharedNamespaces(t, spoke, addonv1alpha1.DefaultAddonInstallNamespace)
			assert.GreaterOrEqual(t, running, 2, "Pods running in the namespaces of %s", c)
		}
	})

	t.Run("unjoin leaves nothing on the managed cluster, and it joins again", func(t *testing.T) {
		out := f.ocm(t, "unjoin", "--cluster-name", "cluster2", "--context", "cluster2")
		assert.Contains(t, out, "cluster2", "unjoin says what remains on the hub")
		c2 := f.env.Cluster("cluster2").Clientset()
		framework.Eventually(t.Context(), t, 2*time.Minute, "the agent namespace removed from cluster2", func(ctx context.Context) (bool, error) {
			_, err := c2.CoreV1().Namespaces().Get(ctx, "open-cluster-management-agent", metav1.GetOptions{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		// Back as the shared fleet had it.
		f.ocm(t, append([]string{"join", "--hub-token", shared.tokens["cluster2"], "--hub-apiserver", shared.apiserver, "--cluster-name", "cluster2", "--context", "cluster2", "--force"}, shared.pins...)...)
		out = f.ocm(t, "accept", "--clusters", "cluster2", "--context", "hub", "--wait", "--rejoin")
		// The conditions of the agent before stay True for a while: the new
		// agent's request is approved, and it writes its hub credential.
		assert.Contains(t, out, "approved (requester", "accept --rejoin approves the new agent's request")
		framework.Eventually(t.Context(), t, 2*time.Minute, "the new agent's hub credential on cluster2", func(ctx context.Context) (bool, error) {
			s, err := c2.CoreV1().Secrets(config.AgentNamespace).Get(ctx, operatorv1.HubKubeConfigSecret, metav1.GetOptions{})
			return err == nil && len(s.Data[kubeconfig.KubeconfigKey]) > 0, client.IgnoreNotFound(err)
		})
		waitJoinedAvailable(t, hub, "cluster2")
	})
}

// waitJoinedAvailable waits until the hub reports ManagedCluster cluster
// Joined and Available.
func waitJoinedAvailable(t *testing.T, hub client.Client, cluster string) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, cluster+" Joined and Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
}

// applySeed creates every object of a seed example file, unchanged.
func applySeed(t *testing.T, c client.Client, name string) {
	t.Helper()
	data := seeds.Data(t, name)
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			require.ErrorIs(t, err, io.EOF, "decode %s", name)
			return
		}
		if len(u.Object) == 0 {
			continue
		}
		require.NoError(t, c.Create(t.Context(), u), "create %s from %s", u.GetName(), name)
	}
}

// scaleAgent sets the replicas of the agent Deployment on a managed cluster,
// and of the Klusterlet operator, which would otherwise scale the agent back
// to the Klusterlet's one replica: stopped first, started last.
func scaleAgent(t *testing.T, c client.Client, replicas int32) {
	t.Helper()
	deployments := []client.ObjectKey{
		{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName},
		{Namespace: config.AgentNamespace, Name: config.AgentDeployment},
	}
	if replicas > 0 {
		slices.Reverse(deployments)
	}
	for _, key := range deployments {
		d := &appsv1.Deployment{}
		require.NoError(t, c.Get(t.Context(), key, d))
		base := d.DeepCopy()
		d.Spec.Replicas = &replicas
		require.NoError(t, c.Patch(t.Context(), d, client.MergeFrom(base)))
		if replicas == 0 && key.Name == config.KlusterletOperatorName {
			// A terminating operator still reconciles, and would give the
			// agent its replica back: wait until none of its Pods is left.
			selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			require.NoError(t, err)
			framework.Eventually(t.Context(), t, 2*time.Minute, "no Pod of "+key.String(), func(ctx context.Context) (bool, error) {
				pods := &corev1.PodList{}
				if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
					return false, err
				}
				return len(pods.Items) == 0, nil
			})
		}
	}
}

// hasTaint reports whether the cluster has a taint with key.
func hasTaint(mc *clusterv1.ManagedCluster, key string) bool {
	for _, taint := range mc.Spec.Taints {
		if taint.Key == key {
			return true
		}
	}
	return false
}
