package kit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// importTimeout bounds the waits of the import helpers: the cluster
// importer may take a few attempts, each with a back-off, to reach a
// condition.
const importTimeout = 2 * time.Minute

// ImportKubeconfig returns a kubeconfig of cfg, its certificates or token
// embedded, as `kubectl ocm import` writes it into an import Secret.
func ImportKubeconfig(t testing.TB, cfg *rest.Config) []byte {
	t.Helper()
	kc, err := imp.Kubeconfig(cfg)
	if err != nil {
		t.Fatalf("kubeconfig of %s for an import Secret: %v", cfg.Host, err)
	}
	return kc
}

// ImportSecret returns the import Secret of cluster (in its namespace on the
// hub) holding a kubeconfig of cfg, as `kubectl ocm import` writes it.
func ImportSecret(t testing.TB, cluster string, cfg *rest.Config) *corev1.Secret {
	t.Helper()
	return imp.NewSecret(cluster, ImportKubeconfig(t, cfg), false)
}

// WriteImportSecret replaces the import Secret of cluster on the hub with
// one holding data (imp.KubeconfigKey, or the server, token and CA keys), as
// a GitOps repository or `kubectl ocm import` would write it, and retries
// the create until the Secret it deleted is gone.
func WriteImportSecret(ctx context.Context, t testing.TB, hub client.Client, cluster string, data map[string][]byte) {
	t.Helper()
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: imp.SecretName}}
	if err := hub.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
		t.Fatalf("delete the import Secret of %s: %v", cluster, err)
	}
	framework.Eventually(ctx, t, importTimeout, "the import Secret of "+cluster+" created", func(ctx context.Context) (bool, error) {
		s := imp.NewSecret(cluster, nil, false)
		s.Data = data
		return true, hub.Create(ctx, s)
	})
}

// WaitImportCondition waits until the import condition of the
// ManagedCluster cluster on the hub has status and reason and its message
// holds says (a ManagedCluster the importer creates may not exist yet).
func WaitImportCondition(ctx context.Context, t testing.TB, hub client.Client, cluster string, status metav1.ConditionStatus, reason, says string) {
	t.Helper()
	framework.Eventually(ctx, t, importTimeout, fmt.Sprintf("%s %s=%s (%s)", cluster, imp.ConditionImportSucceeded, status, reason), func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, imp.ConditionImportSucceeded)
		if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, says) {
			return false, fmt.Errorf("condition %+v", c)
		}
		return true, nil
	})
}
