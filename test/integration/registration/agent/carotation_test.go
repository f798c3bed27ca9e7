package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// rotationLease is the lease duration of the rotated fleet's clusters: an
// agent that loses the hub for 2 of them is shown Unknown. A renewal that
// falls due while the hub API server restarts waits out the restart: under
// make test's load the restart took over 20 s, and with 15 s leases
// cluster1 renewed 39 s after its renewal before, past the 30 s after which
// the hub shows it Unknown. 30 s leaves a renewal interval and such a
// restart within 2 lease durations.
const rotationLease = 30

// TestHubCARotation joins two clusters, one with the certificate driver and
// one with the token driver, to a hub whose serving CA then rotates: the new
// CA is published first, agents add it to the CAs they trust for the hub
// (rotate-ca --check reports when all do), the hub API server restarts with a
// serving certificate of the new CA, and the old CA leaves the published
// bundle, which agents then drop too. Then the client-signing CA rotates:
// the API server accepts the new CA too, the controller manager signs with
// it, rotate-ca --signing-ca-file announces it and waits until the
// certificate-driver cluster holds a certificate of it, and the API server
// stops accepting the old CA. Neither cluster is ever shown other than
// Available; the largest gap between lease renewals is logged.
func TestHubCARotation(t *testing.T) {
	t.Parallel() // a fleet of its own
	const cluster2 = "cluster2"
	ctx, f := agenttest.StartFleet(t, 8*time.Minute, agenttest.FleetOptions{
		Options: framework.Options{Clusters: []string{clusterName, cluster2}},
		// The hub's own components trust the new CA before it serves with
		// it: they start after it is published. The agents start trusting
		// only the old one (join --ca-file) and must learn the new one.
		BeforeRunner: func(ctx context.Context, env *framework.Environment) error {
			return env.AddServingCA(ctx, env.Cluster("hub"))
		},
	})
	env, hubC, oldCA, hubCAFile := f.Env, f.Hub, f.CA, f.CAFile
	newCA := bytes.TrimPrefix(hubC.CAData(), oldCA)
	flagsFor := f.Flags
	clusters := map[string]string{clusterName: operatorv1.CSRAuthType, cluster2: operatorv1.TokenAuthType}
	names := []string{clusterName, cluster2}
	for _, name := range names {
		f.Join(ctx, t, name, func(o *join.Options) { o.RegistrationAuth = clusters[name] })
	}
	mustAccept(ctx, t, flagsFor("hub"), names...)
	setLease(ctx, t, hubC.Client(), rotationLease, names...)
	for _, name := range names {
		framework.Eventually(ctx, t, pollTimeout, name+" Available", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			err := hubC.Client().Get(ctx, client.ObjectKey{Name: name}, mc)
			return err == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), err
		})
	}
	mon := faults.WatchFleet(t, hubC, names, pollInterval)
	renewed := func(t *testing.T, since time.Time) {
		t.Helper()
		framework.Eventually(ctx, t, pollTimeout, "every cluster renews its lease", func(context.Context) (bool, error) { return mon.RenewedAfter(since) })
	}

	t.Run("the agents learn the new serving CA; rotate-ca --check reports when", func(t *testing.T) {
		framework.Eventually(ctx, t, pollTimeout, "rotate-ca --check: every cluster trusts the old and the new CA", func(ctx context.Context) (bool, error) {
			return rotateCACheck(ctx, flagsFor("hub"), "")
		})
		for _, name := range names {
			framework.WaitAgentTrusts(ctx, t, env.Cluster(name), slices.Concat(oldCA, newCA), pollTimeout)
		}
	})

	t.Run("the hub serves with the new CA: the agents reconnect", func(t *testing.T) {
		if err := env.ServeWithNewCA(ctx, hubC); err != nil {
			t.Fatal(err)
		}
		renewed(t, time.Now())
	})

	t.Run("the old CA leaves the hub's bundle: the agents drop it", func(t *testing.T) {
		if err := env.RemoveOldServingCA(ctx, hubC); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, "every cluster trusts only the new CA", func(ctx context.Context) (bool, error) {
			mcs := &clusterv1.ManagedClusterList{}
			if err := hubC.Client().List(ctx, mcs); err != nil {
				return false, err
			}
			want := certs.HubCAsClaimValue(newCA)
			for _, mc := range mcs.Items {
				if got, _ := mc.ClaimValue(certs.HubCAsClaim); got != want {
					return false, fmt.Errorf("%s trusts %q, want %q", mc.Name, got, want)
				}
			}
			return true, nil
		})
		for _, name := range names {
			framework.WaitAgentTrusts(ctx, t, env.Cluster(name), newCA, pollTimeout)
		}
		if ok, err := rotateCACheck(ctx, flagsFor("hub"), hubCAFile); ok || err == nil {
			t.Errorf("rotate-ca --check --ca-file <the old CA> = %t, %v; want an error: no cluster trusts it any more", ok, err)
		}
		renewed(t, time.Now())
	})

	t.Run("the hub signs with a new client CA: rotate-ca --signing-ca-file renews the certificates", func(t *testing.T) {
		if err := env.AddClientCA(ctx, hubC); err != nil {
			t.Fatal(err)
		}
		if err := env.SignWithNewClientCA(ctx, hubC); err != nil {
			t.Fatal(err)
		}
		signer := filepath.Join(t.TempDir(), "signer.crt")
		if err := os.WriteFile(signer, hubC.ClientCAData(), 0o600); err != nil {
			t.Fatal(err)
		}
		if ok, err := rotateCASigning(ctx, flagsFor("hub"), signer, true); ok || err == nil {
			t.Errorf("rotate-ca --check --signing-ca-file before the announcement = %t, %v; want an error: %s holds a certificate of the old CA", ok, err, clusterName)
		}
		if ok, err := rotateCASigning(ctx, flagsFor("hub"), signer, false); !ok {
			t.Fatalf("rotate-ca --signing-ca-file --wait: %v", err)
		}
		signers, err := certs.ParseCertificates(hubC.ClientCAData())
		if err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{}
		if err := env.Cluster(clusterName).Client().Get(ctx, client.ObjectKey{Namespace: agentNS, Name: operatorv1.HubKubeConfigSecret}, sec); err != nil {
			t.Fatal(err)
		}
		issued, err := certs.ParseCertificates(sec.Data[kubeconfig.TLSCertKey])
		if err != nil || !certs.SignedByAny(issued[0], signers) {
			t.Fatalf("the hub credential of %s is not a certificate of the new CA (%v)", clusterName, err)
		}
		if err := env.RemoveOldClientCA(ctx, hubC); err != nil {
			t.Fatal(err)
		}
		renewed(t, time.Now())
	})

	if seen := mon.NotAvailable(); len(seen) > 0 {
		t.Errorf("clusters seen other than Available during the rotations:\n%s", strings.Join(seen, "\n"))
	}
	gap, of := mon.LargestGap()
	t.Logf("lease renewals seen %v; largest gap %s (%s; lease %d s, Unknown after %d s); %d polls of the hub failed (its API server restarted)",
		mon.Renewals(), gap.Round(time.Millisecond), of, rotationLease, 2*rotationLease, mon.FailedPolls())
}

// rotateCASigning runs `kubectl ocm hub rotate-ca --signing-ca-file
// caFile`, with --check or else --wait, and reports whether every cluster
// was ready.
func rotateCASigning(ctx context.Context, flags *genericclioptions.ConfigFlags, caFile string, check bool) (bool, error) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := hub.NewRotateCAOptions(flags, streams)
	o.SigningCAFile, o.Check, o.Wait, o.Timeout = caFile, check, !check, 2*time.Minute
	if err := o.Validate(); err != nil {
		return false, err
	}
	if err := o.Run(ctx); err != nil {
		return false, fmt.Errorf("%w\n%s%s", err, out, errOut)
	}
	return true, nil
}

// rotateCACheck runs `kubectl ocm hub rotate-ca --check` (with --ca-file
// caFile) and reports whether it found every cluster ready.
func rotateCACheck(ctx context.Context, flags *genericclioptions.ConfigFlags, caFile string) (bool, error) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := hub.NewRotateCAOptions(flags, streams)
	o.Check, o.CAFile = true, caFile
	if err := o.Validate(); err != nil {
		return false, err
	}
	if err := o.Run(ctx); err != nil {
		return false, fmt.Errorf("%w\n%s", err, out)
	}
	return true, nil
}
