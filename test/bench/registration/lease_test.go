package registration

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	hublease "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/lease"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// graceRatio is the hub controller's default --lease-grace-ratio: the hub
// marks a cluster Unknown once 2 lease durations have passed since the last
// renewal (docs/design/registration.md, "Lease health").
const graceRatio = hublease.DefaultGraceRatio

// leaseJitter is the largest fraction the agent adds to its renewal
// interval, one lease duration.
const leaseJitter = 0.1

// BenchmarkLeaseExpiry joins cluster1, sets its spec.leaseDurationSeconds to
// -lease-seconds, waits until the agent renews on that period, counts the
// writes to the cluster's hub objects while it idles for -idle, stops the
// agent (Deployment scaled to 0) and measures the seconds until the hub
// reports ManagedClusterConditionAvailable Unknown; then it scales the agent
// back to 1 and measures the seconds until Available is True again.
func BenchmarkLeaseExpiry(b *testing.B) {
	const cluster = "cluster1"
	f := benchkit.StartFleet(b, config.HubOperatorValues{}, cluster)
	ctx := b.Context()
	benchkit.JoinCluster(ctx, b, f, cluster)

	lease := time.Duration(*leaseSeconds) * time.Second
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, *leaseSeconds))
	if err := f.HubClient.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, patch); err != nil {
		b.Fatalf("set the lease duration of %s: %v", cluster, err)
	}
	changed := time.Now()
	// The agent renews at once when the spec changes, and from then on
	// every new period.
	renewals, firstUnknown := waitRenewals(ctx, b, f, cluster, changed, 2, lease)
	interval := renewals[1].Sub(renewals[0])
	b.Logf("lease duration %s: the agent renews every %s (expected %s plus at most 10 %% jitter)",
		lease, interval.Round(time.Millisecond), lease)
	again := benchkit.Poll(ctx, b, benchkit.FastPoll, 2*time.Minute, cluster+" Available before the stop", func(ctx context.Context) (bool, error) {
		return availableIs(ctx, f, cluster, metav1.ConditionTrue)
	})
	if !firstUnknown.IsZero() {
		// The last renewal on the old period is older than 2 × the new
		// duration, so the hub marks the cluster Unknown until the agent's
		// next status sync reports Available again.
		benchkit.Record(b, fmt.Sprintf("lowering the lease duration 60 s → %s: running cluster shown Unknown for", lease), benchkit.Seconds(again.Sub(firstUnknown)),
			"until the agent's next status sync; the stop below comes only once Available again")
	}

	idle := max(*idlePeriod, 3*lease)
	writes := idleWrites(ctx, b, f, cluster, idle)
	total := 0
	for _, n := range writes {
		total += n
	}
	leaseRate, ocmRate := perMinute(writes["leases"], idle), time.Minute.Seconds()/lease.Seconds()
	benchkit.Record(b, fmt.Sprintf("idle lease writes per cluster (lease %s, %s idle)", lease, idle), fmt.Sprintf("%.2f/min", leaseRate),
		fmt.Sprintf("OCM's klusterlet: %.2f/min (one per lease duration)", ocmRate))
	benchkit.Record(b, "idle writes per cluster, all its hub objects", fmt.Sprintf("%.2f/min", perMinute(total, idle)), describeWrites(writes, idle))
	defRate := time.Minute.Seconds() / (clusterv1.DefaultLeaseDurationSeconds * (1 + leaseJitter/2))
	benchkit.Record(b, "default lease 60 s: expected idle lease writes", fmt.Sprintf("%.2f/min per cluster", defRate),
		fmt.Sprintf("%.0f/s at 5,000 clusters; OCM 1/min, %.0f/s", 5000*defRate/60, 5000.0/60))

	spoke := f.Env.Cluster(cluster).Client()
	stop := time.Now()
	scaleAgent(ctx, b, spoke, 0)
	exited := benchkit.Poll(ctx, b, benchkit.FastPoll, time.Minute, "the agent process to exit", func(context.Context) (bool, error) {
		return f.Pid(cluster, config.AgentNamespace, benchkit.AgentDeployment) == 0, nil
	})
	last := lastRenewal(ctx, b, f, cluster)
	unknown := benchkit.Poll(ctx, b, benchkit.FastPoll, 3*lease+time.Minute, cluster+" Available Unknown", func(ctx context.Context) (bool, error) {
		return availableIs(ctx, f, cluster, metav1.ConditionUnknown)
	})

	start := time.Now()
	scaleAgent(ctx, b, spoke, 1)
	started := benchkit.Poll(ctx, b, benchkit.FastPoll, time.Minute, "the agent process to start", func(context.Context) (bool, error) {
		return f.Pid(cluster, config.AgentNamespace, benchkit.AgentDeployment) != 0, nil
	})
	available := benchkit.Poll(ctx, b, benchkit.FastPoll, 2*time.Minute, cluster+" Available again", func(ctx context.Context) (bool, error) {
		return availableIs(ctx, f, cluster, metav1.ConditionTrue)
	})

	earliest, limit := expectedDetection(lease)
	defEarliest, defLimit := expectedDetection(clusterv1.DefaultLeaseDurationSeconds * time.Second)
	benchkit.Record(b, "lease duration (spec.leaseDurationSeconds)", benchkit.Seconds(lease), fmt.Sprintf("renewed every %s (measured)", interval.Round(time.Millisecond)))
	benchkit.Record(b, "agent stop (scale to 0) → Available Unknown", benchkit.Seconds(unknown.Sub(stop)),
		fmt.Sprintf("%.2f × lease; expected %.2f–%.2f s (2 × lease after the last renewal); OCM: 5 × lease", unknown.Sub(stop).Seconds()/lease.Seconds(), earliest.Seconds(), limit.Seconds()))
	benchkit.Record(b, "last lease renewal → Available Unknown", benchkit.Seconds(unknown.Sub(last)), fmt.Sprintf("contract: 2 × lease = %s, plus the hub's reaction and the 20 ms poll", benchkit.Seconds(limit)))
	benchkit.Record(b, "agent process exit after scale to 0", benchkit.Seconds(exited.Sub(stop)), "graceful shutdown by the runner")
	benchkit.Record(b, "default lease 60 s: expected stop → Unknown", fmt.Sprintf("%.2f–%.2f s", defEarliest.Seconds(), defLimit.Seconds()),
		"not measured: 2 × 60 s after the last renewal; OCM 300 s")
	benchkit.Record(b, "scale to 1 → Available True again", benchkit.Seconds(available.Sub(start)), fmt.Sprintf("process started after %s", benchkit.Seconds(started.Sub(start))))
	b.ReportMetric(unknown.Sub(stop).Seconds(), "unknown-after-stop-s")
	b.ReportMetric(available.Sub(start).Seconds(), "available-again-s")
	b.ReportMetric(0, "ns/op")
}

// expectedDetection returns the window, measured from the agent's stop, in
// which the hub should mark a cluster with lease duration lease Unknown: 2 ×
// lease after the last renewal, which came at most one renewal interval
// (lease plus 10 % jitter) before the stop.
func expectedDetection(lease time.Duration) (earliest, latest time.Duration) {
	latest = time.Duration(graceRatio * float64(lease))
	return latest - time.Duration((1+leaseJitter)*float64(lease)), latest
}

// waitRenewals waits until the agent of cluster has renewed its lease n times
// after since and returns the renewal times, and when the cluster's Available
// condition was first seen Unknown meanwhile (zero if never).
func waitRenewals(ctx context.Context, b *testing.B, f *benchkit.Fleet, cluster string, since time.Time, n int, lease time.Duration) (renewals []time.Time, firstUnknown time.Time) {
	b.Helper()
	// The agent renews at once on a spec change; should it miss that, the
	// next renewal on the old (default 60 s) period comes first.
	timeout := time.Duration(clusterv1.DefaultLeaseDurationSeconds)*time.Second*11/10 + time.Duration(n)*lease*2
	benchkit.Poll(ctx, b, 100*time.Millisecond, timeout, fmt.Sprintf("%d lease renewals of %s", n, cluster), func(ctx context.Context) (bool, error) {
		if unknown, err := availableIs(ctx, f, cluster, metav1.ConditionUnknown); err == nil && unknown && firstUnknown.IsZero() {
			firstUnknown = time.Now()
		}
		l := &coordinationv1.Lease{}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, l); err != nil {
			return false, err
		}
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(since) {
			return false, nil
		}
		if r := l.Spec.RenewTime.Time; len(renewals) == 0 || !r.Equal(renewals[len(renewals)-1]) {
			renewals = append(renewals, r)
		}
		return len(renewals) >= n, nil
	})
	return renewals, firstUnknown
}

// lastRenewal returns the renew time of cluster's lease.
func lastRenewal(ctx context.Context, b *testing.B, f *benchkit.Fleet, cluster string) time.Time {
	b.Helper()
	l := &coordinationv1.Lease{}
	if err := f.HubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, l); err != nil {
		b.Fatalf("read the lease of %s: %v", cluster, err)
	}
	if l.Spec.RenewTime == nil {
		b.Fatalf("the lease of %s has no renew time", cluster)
	}
	return l.Spec.RenewTime.Time
}

// availableIs reports whether cluster's Available condition has status.
func availableIs(ctx context.Context, f *benchkit.Fleet, cluster string, status metav1.ConditionStatus) (bool, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := f.HubClient.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return false, err
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	return c != nil && c.Status == status, nil
}

// scaleAgent sets the agent Deployment's replicas, as `kubectl scale` would.
func scaleAgent(ctx context.Context, b *testing.B, spoke client.Client, replicas int) {
	b.Helper()
	scaleDeployment(ctx, b, spoke, client.ObjectKey{Namespace: config.AgentNamespace, Name: benchkit.AgentDeployment}, replicas)
}
