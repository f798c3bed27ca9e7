package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/require"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/unjoin"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// TestTokenRegistration joins a cluster with `join --registration-auth
// token` to a hub whose controller manager signs no client certificates,
// accepts it with `accept`, and checks that it becomes available with a
// token credential; that deleting its ServiceAccount on the hub (revoking
// it) makes the agent register again, which a new accept answers; and that
// unjoin deletes the ServiceAccount.
func TestTokenRegistration(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 6*time.Minute, agenttest.FleetOptions{
		Options: framework.Options{Clusters: []string{clusterName}, NoClientSigning: []string{"hub"}},
	})
	hub, spoke := f.Hub, f.Env.Cluster(clusterName)
	spokeFlags, hubFlags := f.Flags(clusterName), f.Flags("hub")
	acceptCluster := func(t *testing.T) {
		t.Helper()
		mustAccept(ctx, t, hubFlags, clusterName)
	}
	available := func(t *testing.T) {
		t.Helper()
		for _, typ := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
			framework.Eventually(ctx, t, pollTimeout, "ManagedCluster condition "+typ, func(ctx context.Context) (bool, error) {
				return conditionTrue(ctx, hub.Client(), typ)
			})
		}
	}
	agentSA := client.ObjectKey{Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(clusterName)}

	t.Run("join, accept: available with a token credential", func(t *testing.T) {
		start := time.Now()
		f.Join(ctx, t, clusterName, func(o *join.Options) { o.RegistrationAuth = operatorv1.TokenAuthType })
		acceptCluster(t)
		available(t)
		t.Logf("join --registration-auth token → Available: %s", time.Since(start).Round(10*time.Millisecond))
		csrs, err := csrsOf(ctx, hub.Client())
		if err != nil || len(csrs) != 1 {
			t.Fatalf("%d requests of the cluster (%v), want one", len(csrs), err)
		}
		if csrs[0].Spec.SignerName != certs.AgentTokenSignerName || len(csrs[0].Status.Certificate) > 0 || csrs[0].Annotations[certs.SealedTokenAnnotation] == "" {
			t.Errorf("request %s: signer %s, certificate %d bytes, sealed token %t; want a sealed token of signer %s and no certificate",
				csrs[0].Name, csrs[0].Spec.SignerName, len(csrs[0].Status.Certificate), csrs[0].Annotations[certs.SealedTokenAnnotation] != "", certs.AgentTokenSignerName)
		}
		sec, err := hubSecret(ctx, spoke.Client())
		if err != nil {
			t.Fatal(err)
		}
		if len(sec.Data[kubeconfig.TLSCertKey]) > 0 || len(sec.Data[kubeconfig.TokenKey]) == 0 {
			t.Errorf("the hub credential has keys %v, want a token and no certificate", keys(sec.Data))
		}
		claims, err := kubeconfig.ParseServiceAccountToken(sec.Data[kubeconfig.TokenKey])
		if err != nil || claims.Namespace != agentSA.Namespace || claims.Name != agentSA.Name {
			t.Errorf("the hub credential's token is %+v (%v), want one of %s", claims, err, agentSA)
		}
	})

	t.Run("the hub deletes the ServiceAccount: the agent registers again", func(t *testing.T) {
		if err := hub.Client().Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: agentSA.Namespace, Name: agentSA.Name}}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, "a new pending token request", func(ctx context.Context) (bool, error) {
			pending, err := pendingCSRs(ctx, hub.Client())
			return len(pending) == 1 && pending[0].Spec.SignerName == certs.AgentTokenSignerName, err
		})
		framework.Eventually(ctx, t, pollTimeout, "Klusterlet HubConnectionDegraded naming the accept command", func(ctx context.Context) (bool, error) {
			c, err := klusterletCondition(ctx, spoke.Client(), operatorv1.ConditionHubConnectionDegraded)
			return c != nil && c.Status == "True" && strings.Contains(c.Message, "kubectl ocm accept --clusters "+clusterName), err
		})
		// The cluster joined before: its new registration is a rejoin.
		if out, err := runAcceptRejoin(ctx, t, hubFlags, 2*time.Minute, clusterName); err != nil {
			t.Fatalf("accept --rejoin: %v\noutput:\n%s", err, out)
		}
		framework.Eventually(ctx, t, pollTimeout, "ServiceAccount "+agentSA.String()+" created again", func(ctx context.Context) (bool, error) {
			err := hub.Client().Get(ctx, agentSA, &corev1.ServiceAccount{})
			return err == nil, client.IgnoreNotFound(err)
		})
		available(t)
	})

	t.Run("unjoin deletes the ServiceAccount on the hub", func(t *testing.T) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o := unjoin.NewOptions(spokeFlags, streams)
		o.ClusterName = clusterName
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(ctx); err != nil {
			t.Fatalf("unjoin: %v\noutput:\n%s", err, out)
		}
		err := hub.Client().Get(ctx, agentSA, &corev1.ServiceAccount{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("ServiceAccount %s remains on the hub after unjoin (err %v)", agentSA, err)
		}
	})

	t.Run("a certificate join to this hub: accept names the token driver", func(t *testing.T) {
		// The hub forgets the cluster, as unjoin's output suggests.
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
		if err := hub.Client().Delete(ctx, mc); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, "ManagedCluster "+clusterName+" removed", func(ctx context.Context) (bool, error) {
			err := hub.Client().Get(ctx, client.ObjectKeyFromObject(mc), mc)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		f.Join(ctx, t, clusterName)
		acceptOut, err := runAccept(ctx, t, hubFlags, csr.UnsignedGrace+20*time.Second, clusterName)
		require.ErrorContains(t, err, "--registration-auth token", "accept on a hub that signs nothing; output:\n%s", acceptOut)
		t.Logf("accept: %v", err)
	})
}

// keys returns the keys of data.
func keys(data map[string][]byte) []string {
	var out []string
	for k := range data {
		out = append(out, k)
	}
	return out
}
