package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// WaitAgentTrusts waits up to timeout until the agent on cluster c (in the
// default agent namespace) trusts exactly the CAs of the PEM bundle want for
// its hub, in its hub kubeconfig and its bootstrap kubeconfig Secrets, as a
// hub CA rotation needs before each step.
func WaitAgentTrusts(ctx context.Context, t testing.TB, c *Cluster, want []byte, timeout time.Duration) {
	t.Helper()
	for _, name := range []string{operatorv1.HubKubeConfigSecret, operatorv1.BootstrapHubKubeConfigSecret} {
		Eventually(ctx, t, timeout, fmt.Sprintf("the CAs of Secret %s on %s", name, c.Name), func(ctx context.Context) (bool, error) {
			sec := &corev1.Secret{}
			if err := c.Client().Get(ctx, client.ObjectKey{Namespace: config.AgentNamespace, Name: name}, sec); err != nil {
				return false, err
			}
			info, err := kubeconfig.FromSecret(sec.Data)
			if err != nil {
				return false, err
			}
			if got, want := certs.HubCAsClaimValue(info.CAData), certs.HubCAsClaimValue(want); got != want {
				return false, fmt.Errorf("trusts %s, want %s", got, want)
			}
			return true, nil
		})
	}
}
