package registration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

// BenchmarkHubCARotation joins -rotation-clusters clusters (certificate
// driver) with a lease of -lease-seconds and rotates the hub's serving CA,
// then its client-signing CA, in an administrator's steps (see `kubectl ocm
// hub rotate-ca --help`), timing how long the fleet takes to follow each
// step; it prints the largest gap between two lease renewals of a cluster
// and every Available condition other than True seen meanwhile (none is the
// promise).
func BenchmarkHubCARotation(b *testing.B) {
	var clusters []string
	for i := range *rotationClusters {
		clusters = append(clusters, fmt.Sprintf("cluster%d", i+1))
	}
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{
		// The new serving CA is published before the hub's components
		// start, so that they trust it from the start; the agents join
		// trusting the old one only and have to learn it.
		BeforeRunner: func(ctx context.Context, env *framework.Environment) error {
			return env.AddServingCA(ctx, env.Cluster("hub"))
		},
	}, clusters...)
	ctx := b.Context()
	for _, c := range clusters {
		benchkit.JoinCluster(ctx, b, f, c)
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, *leaseSeconds))
		if err := f.Hub.Client().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}, patch); err != nil {
			b.Fatal(err)
		}
	}
	watch := faults.WatchFleet(b, f.Hub, clusters, 100*time.Millisecond)
	hub := f.Hub
	bundle := hub.CAData()
	newCA := bundle[len(f.JoinCA):]
	timeout := 3 * time.Minute

	// claimsAre waits until every cluster's claim name has the value want
	// says, and returns when.
	claimsAre := func(what, name string, want func(string) bool) time.Time {
		return benchkit.Poll(ctx, b, benchkit.FastPoll, timeout, what, func(ctx context.Context) (bool, error) {
			mcs := &clusterv1.ManagedClusterList{}
			if err := hub.Client().List(ctx, mcs); err != nil {
				return false, err
			}
			for _, mc := range mcs.Items {
				if v, _ := mc.ClaimValue(name); !want(v) {
					return false, fmt.Errorf("%s: %s=%q", mc.Name, name, v)
				}
			}
			return len(mcs.Items) == len(clusters), nil
		})
	}
	renewed := func(what string, since time.Time) time.Time {
		return benchkit.Poll(ctx, b, benchkit.FastPoll, timeout, what, func(context.Context) (bool, error) { return watch.RenewedAfter(since) })
	}

	both := certs.HubCAsClaimValue(bundle)
	start := time.Now()
	learned := claimsAre("every cluster trusts the old and the new serving CA", certs.HubCAsClaim, func(v string) bool { return v == both })
	benchkit.Record(b, "serving CA rotation: every agent trusts the published new CA", benchkit.Seconds(learned.Sub(start)),
		"measured from the last join; each agent adds it right after it connects")

	start = time.Now()
	if err := f.Env.ServeWithNewCA(ctx, hub); err != nil {
		b.Fatal(err)
	}
	restarted := time.Now()
	back := renewed("every cluster renews after the hub serves with the new CA", restarted)
	benchkit.Record(b, "serving CA rotation: hub API server restarted with the new CA, then every cluster renewed", benchkit.Seconds(back.Sub(start)),
		fmt.Sprintf("restart %s; agents renew on their lease period, %d s", benchkit.Seconds(restarted.Sub(start)), *leaseSeconds))

	start = time.Now()
	if err := f.Env.RemoveOldServingCA(ctx, hub); err != nil {
		b.Fatal(err)
	}
	only := certs.HubCAsClaimValue(newCA)
	dropped := claimsAre("every cluster trusts only the new serving CA", certs.HubCAsClaim, func(v string) bool { return v == only })
	benchkit.Record(b, "serving CA rotation: old CA removed from the bundle → every agent dropped it", benchkit.Seconds(dropped.Sub(start)),
		"includes the controller manager's restart, which publishes the bundle")

	if err := f.Env.AddClientCA(ctx, hub); err != nil {
		b.Fatal(err)
	}
	if err := f.Env.SignWithNewClientCA(ctx, hub); err != nil {
		b.Fatal(err)
	}
	signers, err := certs.ParseCertificates(hub.ClientCAData())
	if err != nil {
		b.Fatal(err)
	}
	newSigner := certs.KeyID(signers[0].SubjectKeyId)
	start = time.Now()
	announce := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, certs.ClientSignerAnnotation, hub.ClientCAData()))
	for _, c := range clusters {
		if err := hub.Client().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}, announce); err != nil {
			b.Fatal(err)
		}
	}
	reissued := claimsAre("every cluster holds a certificate of the new signing CA", certs.ClientIssuerClaim, func(v string) bool { return v == newSigner })
	benchkit.Record(b, "signing CA rotation: new signer announced → every agent holds a certificate of it", benchkit.Seconds(reissued.Sub(start)),
		fmt.Sprintf("%d clusters, renewal requests approved by the hub controller", len(clusters)))
	if err := f.Env.RemoveOldClientCA(ctx, hub); err != nil {
		b.Fatal(err)
	}
	renewed("every cluster renews after the old client CA is removed", time.Now())

	gap, of := watch.LargestGap()
	benchkit.Record(b, "CA rotations: largest gap between two lease renewals of a cluster", benchkit.Seconds(gap),
		fmt.Sprintf("%s; lease %d s (Unknown after %d s without a renewal)", of, *leaseSeconds, 2**leaseSeconds))
	seen := watch.NotAvailable()
	benchkit.Record(b, "CA rotations: clusters seen other than Available", fmt.Sprint(len(seen)), strings.Join(seen, "; "))
}
