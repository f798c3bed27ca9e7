package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestNetworkPoliciesEnforced shows that the nodes enforce NetworkPolicies:
// a Pod reaches a server Pod in another namespace; once a policy admits only
// the namespace "allowed" to the server, the Pod no longer does, while a Pod
// in "allowed" still does.
func TestNetworkPoliciesEnforced(t *testing.T) {
	SkipIfShort(t)
	env := startNodes(t, "hub")
	cs := env.Cluster("hub").Clientset()
	ctx := t.Context()
	for _, ns := range []string{"np-server", "allowed"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	server := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Namespace: "np-server", Labels: map[string]string{"app": "server"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"httpd", "-f", "-p", "8080"}}}},
	}
	_, err := cs.CoreV1().Pods("np-server").Create(ctx, server, metav1.CreateOptions{})
	require.NoError(t, err)
	var ip string
	Eventually(ctx, t, 2*time.Minute, "the server Pod to run", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("np-server").Get(ctx, "server", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ip = p.Status.PodIP
		return p.Status.Phase == corev1.PodRunning && ip != "", nil
	})
	// probe reports the first answer that differs from the previous one
	// within 20 connection attempts, or the last one.
	probe := func(name, namespace, expect string) string {
		_, logs := runPodIn(t, cs, namespace, name, "sh", "-c", fmt.Sprintf(
			`for i in $(seq 20); do if nc -w 2 %s 8080 </dev/null 2>/dev/null; then r=open; else r=closed; fi; [ $r = %s ] && break; done; echo $r`, ip, expect))
		return logs
	}
	assert.Equal(t, "open\n", probe("before", "default", "open"), "a Pod reaches the server before any policy")

	policy := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "only-allowed", Namespace: "np-server"},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "allowed"}},
			}}}},
		},
	}
	_, err = cs.NetworkingV1().NetworkPolicies("np-server").Create(ctx, policy, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "closed\n", probe("denied", "default", "closed"), "a Pod of another namespace reaches the server the policy closes")
	assert.Equal(t, "open\n", probe("admitted", "allowed", "open"), "a Pod of the admitted namespace does not reach the server")
}

// runPodIn runs a busybox Pod with command in namespace of cluster cs until
// it ends, and returns its phase and log.
func runPodIn(t *testing.T, cs kubernetes.Interface, namespace, name string, command ...string) (corev1.PodPhase, string) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: command}},
		},
	}
	_, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	var phase corev1.PodPhase
	Eventually(ctx, t, 3*time.Minute, "Pod "+namespace+"/"+name+" to end", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	logs, err := cs.CoreV1().Pods(namespace).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	return phase, string(logs)
}
