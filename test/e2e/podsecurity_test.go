package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// assertRestrictedNamespaces checks that each of namespaces carries the Pod
// Security labels of pkg/podsecurity and that every Pod in it runs: the
// kubelet runs, in a namespace that enforces restricted, what its admission
// let through. It returns how many Pods run there.
func assertRestrictedNamespaces(t *testing.T, c client.Client, namespaces ...string) int {
	t.Helper()
	return assertNamespacesLabeled(t, c, podsecurity.Labels(), namespaces...)
}

// assertSharedNamespaces checks that each of namespaces, which the product
// shares with OCM's add-ons, warns and audits at restricted without
// enforcing it (podsecurity.SharedLabels) and that every Pod in it runs.
// It returns how many Pods run there.
func assertSharedNamespaces(t *testing.T, c client.Client, namespaces ...string) int {
	t.Helper()
	return assertNamespacesLabeled(t, c, podsecurity.SharedLabels(false), namespaces...)
}

// assertNamespacesLabeled checks that the Pod Security labels of each of
// namespaces are want, and that every Pod in it runs; it returns how many
// Pods run there.
func assertNamespacesLabeled(t *testing.T, c client.Client, want map[string]string, namespaces ...string) int {
	t.Helper()
	running := 0
	for _, name := range namespaces {
		ns := &corev1.Namespace{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: name}, ns), "namespace %s", name)
		got := podsecurity.LabelsOf(ns.Labels)
		assert.Equal(t, want, got, "Pod Security labels of namespace %s", name)
		var pods []corev1.Pod
		framework.Eventually(t.Context(), t, 2*time.Minute, "every Pod of namespace "+name+" Running", func(ctx context.Context) (bool, error) {
			list := &corev1.PodList{}
			if err := c.List(ctx, list, client.InNamespace(name)); err != nil {
				return false, err
			}
			for _, p := range list.Items {
				if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodRunning {
					return false, fmt.Errorf("Pod %s/%s is %s", name, p.Name, p.Status.Phase)
				}
			}
			pods = list.Items
			return true, nil
		})
		running += len(pods)
	}
	return running
}
