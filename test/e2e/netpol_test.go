package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestAgentNetworkPolicies sets the Klusterlet's networkPolicyConfiguration
// on cluster1 of the shared fleet, whose node enforces NetworkPolicies: a
// Pod of another namespace reached the agent's metrics and health ports
// before and no longer does; the agent, restarted so that every connection
// it makes is new, joins its hub again and applies a ManifestWork. Then the
// hub's own policies: with the ClusterManager's networkPolicyConfiguration
// the hub controller's metrics port closes to other Pods. Both fields are
// unset again at the end.
func TestAgentNetworkPolicies(t *testing.T) {
	f := sharedFleet(t)
	ctx := t.Context()
	hubC, c1 := f.env.Cluster("hub"), f.env.Cluster("cluster1")
	hub, managed := hubC.Client(), c1.Client()
	const cluster, ns = "cluster1", config.AgentNamespace

	editKlusterlet(t, managed, func(k *operatorv1.Klusterlet) { k.Spec.NetworkPolicyConfiguration = nil })
	agentIP := podIP(t, managed, ns, config.AgentDeployment)
	ports := []int{config.AgentMetricsPort, 8081}
	assert.Equal(t, "open open", probe(t, c1.Clientset(), "agent-before", agentIP, ports, "open"), "another namespace's Pod reaches the agent's ports without policies")

	t.Cleanup(func() {
		editKlusterlet(t, managed, func(k *operatorv1.Klusterlet) { k.Spec.NetworkPolicyConfiguration = nil })
		waitPolicies(t, managed, ns, 0)
	})
	editKlusterlet(t, managed, func(k *operatorv1.Klusterlet) {
		k.Spec.NetworkPolicyConfiguration = &operatorv1.KlusterletNetworkPolicyConfiguration{MonitoringNamespace: "monitoring"}
	})
	waitPolicies(t, managed, ns, 3)
	assert.Equal(t, "closed closed", probe(t, c1.Clientset(), "agent-after", agentIP, ports, "closed"), "another namespace's Pod reaches the agent's ports through its policies")

	// A new agent Pod: every connection it makes goes through the policies.
	pods := &corev1.PodList{}
	require.NoError(t, managed.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": config.AgentDeployment}))
	for i := range pods.Items {
		require.NoError(t, managed.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)))
	}
	framework.Eventually(ctx, t, 2*time.Minute, "a new agent Pod ready", func(ctx context.Context) (bool, error) {
		return newPodReady(ctx, managed, ns, pods), nil
	})
	waitJoinedAvailable(t, hub, cluster)
	w, err := framework.AppWork(cluster, "netpol", "netpol")
	require.NoError(t, err)
	require.NoError(t, hub.Create(ctx, w))
	t.Cleanup(func() { _ = hub.Delete(context.Background(), w) })
	waitDeploymentAvailable(t, managed, "netpol", "app")

	t.Run("the hub controller's metrics port closes with the ClusterManager's policies", func(t *testing.T) {
		hubIP := podIP(t, hub, config.HubNamespace, config.HubControllerDeployment)
		hubPorts := []int{config.HubMetricsPort}
		assert.Equal(t, "open", probe(t, hubC.Clientset(), "hub-before", hubIP, hubPorts, "open"), "a Pod reaches the hub controller's metrics port without policies")
		editClusterManager(t, hub, func(cm *operatorv1.ClusterManager) {
			cm.Spec.NetworkPolicyConfiguration = &operatorv1.NetworkPolicyConfiguration{}
		})
		t.Cleanup(func() {
			editClusterManager(t, hub, func(cm *operatorv1.ClusterManager) { cm.Spec.NetworkPolicyConfiguration = nil })
		})
		// The hub controller's webhook port and the hub tunnel's port.
		waitPolicies(t, hub, config.HubNamespace, 2)
		assert.Equal(t, "closed", probe(t, hubC.Clientset(), "hub-after", hubIP, hubPorts, "closed"), "a Pod reaches the hub controller's metrics port through its policies")
	})
}

// editKlusterlet changes the Klusterlet of the cluster of c.
func editKlusterlet(t *testing.T, c client.Client, change func(*operatorv1.Klusterlet)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		k := &operatorv1.Klusterlet{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil {
			return err
		}
		change(k)
		return c.Update(context.Background(), k)
	}))
}

// editClusterManager changes the ClusterManager of the hub of c.
func editClusterManager(t *testing.T, c client.Client, change func(*operatorv1.ClusterManager)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &operatorv1.ClusterManager{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
			return err
		}
		change(cm)
		return c.Update(context.Background(), cm)
	}))
}

// waitPolicies waits until namespace holds n NetworkPolicies.
func waitPolicies(t *testing.T, c client.Client, namespace string, n int) {
	t.Helper()
	framework.Eventually(context.Background(), t, 2*time.Minute, fmt.Sprintf("%d NetworkPolicies in %s", n, namespace), func(ctx context.Context) (bool, error) {
		list := &networkingv1.NetworkPolicyList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		if len(list.Items) != n {
			return false, fmt.Errorf("%d NetworkPolicies", len(list.Items))
		}
		return true, nil
	})
}

// podIP returns the address of the running Pod of Deployment name.
func podIP(t *testing.T, c client.Client, namespace, name string) string {
	t.Helper()
	dep := &appsv1.Deployment{}
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, dep))
	var ip string
	framework.Eventually(t.Context(), t, 2*time.Minute, "a running Pod of "+namespace+"/"+name, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
				ip = p.Status.PodIP
				return true, nil
			}
		}
		return false, nil
	})
	return ip
}

// newPodReady reports whether namespace has a ready Pod that is none of old.
func newPodReady(ctx context.Context, c client.Client, namespace string, old *corev1.PodList) bool {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"app.kubernetes.io/name": config.AgentDeployment}); err != nil {
		return false
	}
	for _, p := range pods.Items {
		isOld := false
		for _, o := range old.Items {
			isOld = isOld || o.UID == p.UID
		}
		for _, cond := range p.Status.Conditions {
			if !isOld && cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// probe runs a busybox Pod in namespace default that connects to each port
// of ip, up to 20 times until every port answers as expect ("open" or
// "closed"), and returns what the last round saw, one word per port.
func probe(t *testing.T, cs kubernetes.Interface, name, ip string, ports []int, expect string) string {
	t.Helper()
	ctx := t.Context()
	var round, want []string
	for _, p := range ports {
		round = append(round, fmt.Sprintf(`if nc -w 2 %s %d </dev/null 2>/dev/null; then r="$r open"; else r="$r closed"; fi`, ip, p))
		want = append(want, expect)
	}
	script := fmt.Sprintf(`for i in $(seq 20); do r=""; %s; [ "$r" = " %s" ] && break; done; echo $r`, strings.Join(round, "; "), strings.Join(want, " "))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-" + name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "probe", Image: "docker.io/library/busybox:latest", Command: []string{"sh", "-c", script}}},
		},
	}
	_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), pod.Name, metav1.DeleteOptions{}) })
	framework.Eventually(ctx, t, 3*time.Minute, "Pod "+pod.Name+" to end", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	logs, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	return strings.TrimSpace(string(logs))
}
