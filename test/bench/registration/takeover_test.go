package registration

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// The benchmark's leader election timings unless -takeover-lease scales
// them, set explicitly rather than taken from the product's defaults, so
// that its figures stay comparable from run to run: controller-runtime's
// 15 s, 10 s and 2 s.
const (
	takeoverLeaseDuration = 15 * time.Second
	takeoverRenewDeadline = 10 * time.Second
	takeoverRetryPeriod   = 2 * time.Second
)

var takeoverLease = flag.Duration("takeover-lease", takeoverLeaseDuration,
	"BenchmarkLeaderTakeover: the hub controllers' --leader-elect-lease-duration (renew deadline and retry period in the proportions of 15 s, 10 s and 2 s)")

// hubLeaseKey is the hub controller's leader election Lease
// (hubLeaderElectionID of controllers/cmd/ocm-controller/app).
var hubLeaseKey = client.ObjectKey{Namespace: config.HubNamespace, Name: "ocm-hub-controller.open-cluster-management.io"}

// BenchmarkLeaderTakeover runs two hub controllers (`ocm-controller hub`,
// the shipped binary, arguments and ServiceAccount, leader election on with
// a lease of -takeover-lease) against one hub, waits until one leads and has
// accepted a ManagedCluster, and kills the leader (SIGKILL, so it cannot
// hand the Lease over). It prints the time from the kill to the standby's
// acquisition of the Lease, the killed leader's last renewal to that
// acquisition against the lease duration, and the time from the kill until
// the new leader has accepted a ManagedCluster created after the kill (its
// namespace and RBAC applied, HubAcceptedManagedCluster True).
func BenchmarkLeaderTakeover(b *testing.B) {
	lease, renew, retry := leaderTimings(*takeoverLease)
	f := benchkit.StartFleet(b, config.HubOperatorValues{})
	ctx := b.Context()
	shipped, ok := f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)
	if !ok || shipped.Pid == 0 {
		b.Fatal("the component runner runs no hub controller")
	}
	// The runner would restart a killed replica a second later, a third
	// competitor that counts the lease from its own start: the benchmark
	// runs both replicas itself. The ClusterManager operator goes first, or
	// it would scale the hub controller back.
	for _, d := range []client.ObjectKey{{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment}, {Namespace: config.HubNamespace, Name: benchkit.HubController}} {
		scaleDeployment(ctx, b, f.HubClient, d, 0)
		benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, d.String()+" stopped", func(context.Context) (bool, error) {
			return f.Pid("hub", d.Namespace, d.Name) == 0, nil
		})
	}
	leaseArgs := []string{"--leader-elect-lease-duration=" + lease.String(), "--leader-elect-renew-deadline=" + renew.String(), "--leader-elect-retry-period=" + retry.String()}
	replicas := []*hubReplica{startHubReplica(b, shipped, leaseArgs, "a"), startHubReplica(b, shipped, leaseArgs, "b")}
	var leader, standby *hubReplica
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 2*time.Minute, "one hub controller leading, the other campaigning", func(ctx context.Context) (bool, error) {
		leader, standby = nil, nil
		for _, r := range replicas {
			leads, err := r.leading(ctx)
			if err != nil {
				return false, err
			}
			if leads {
				leader = r
			} else if campaigning, err := r.campaigning(ctx); err != nil || !campaigning {
				return false, err
			} else {
				standby = r
			}
		}
		return leader != nil && standby != nil, nil
	})
	// The leader acts before the kill: the Lease it holds is renewed and
	// its controllers run.
	acceptCluster(ctx, b, f.HubClient, "takeover-before")
	benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "takeover-before accepted by the leader", func(ctx context.Context) (bool, error) {
		return accepted(ctx, f.HubClient, "takeover-before")
	})
	held := &coordinationv1.Lease{}
	if err := f.HubClient.Get(ctx, hubLeaseKey, held); err != nil {
		b.Fatal(err)
	}
	holder := ptr.Deref(held.Spec.HolderIdentity, "")

	killed := time.Now()
	leader.kill(b)
	// The killed leader renews no more: the renewal the Lease holds now is
	// its last (TestHubFailover reads it the same way).
	last := &coordinationv1.Lease{}
	if err := f.HubClient.Get(ctx, hubLeaseKey, last); err != nil {
		b.Fatal(err)
	}
	acceptCluster(ctx, b, f.HubClient, "takeover-after")
	taken := &coordinationv1.Lease{}
	benchkit.Poll(ctx, b, benchkit.FastPoll, 2*lease+time.Minute, "the standby to take the Lease", func(ctx context.Context) (bool, error) {
		if err := f.HubClient.Get(ctx, hubLeaseKey, taken); err != nil {
			return false, err
		}
		h := ptr.Deref(taken.Spec.HolderIdentity, "")
		return h != "" && h != holder, nil
	})
	reconciled := benchkit.Poll(ctx, b, benchkit.FastPoll, time.Minute, "takeover-after accepted by the new leader", func(ctx context.Context) (bool, error) {
		return accepted(ctx, f.HubClient, "takeover-after")
	})
	if ptr.Deref(last.Spec.HolderIdentity, "") != holder || last.Spec.RenewTime == nil || taken.Spec.AcquireTime == nil {
		b.Fatalf("the Lease changed hands as the leader was killed, or lacks its times: last %+v, taken %+v", last.Spec, taken.Spec)
	}
	if leads, err := standby.leading(ctx); err != nil || !leads {
		b.Fatalf("the standby does not lead after the takeover (err %v)", err)
	}

	acquired := taken.Spec.AcquireTime.Time
	takeover, gap, first := acquired.Sub(killed), acquired.Sub(last.Spec.RenewTime.Time), reconciled.Sub(killed)
	earliest, latest := expectedTakeover(lease, retry)
	setting := fmt.Sprintf("lease %s, renew deadline %s, retry period %s", lease, renew, retry)
	benchkit.Record(b, "leader killed → standby acquires the Lease (its acquireTime)", benchkit.Seconds(takeover), setting)
	benchkit.Record(b, "killed leader's last renewal → standby's acquisition", benchkit.Seconds(gap),
		fmt.Sprintf("%.2f × lease; expected %s–%s: one lease after the last renewal the standby saw, up to one jittered retry late each way",
			gap.Seconds()/lease.Seconds(), benchkit.Seconds(earliest), benchkit.Seconds(latest)))
	benchkit.Record(b, "leader killed → ManagedCluster created after the kill accepted", benchkit.Seconds(first),
		fmt.Sprintf("%s after the acquisition: namespace and RBAC applied, HubAcceptedManagedCluster True", benchkit.Seconds(reconciled.Sub(acquired))))
	b.ReportMetric(takeover.Seconds(), "takeover-s")
	b.ReportMetric(gap.Seconds()/lease.Seconds(), "renewal-to-acquire-per-lease")
	b.ReportMetric(first.Seconds(), "first-reconcile-s")
	b.ReportMetric(0, "ns/op")
}

// leaderTimings returns the renew deadline and retry period that go with
// lease duration lease, in the proportions of takeoverLeaseDuration,
// takeoverRenewDeadline and takeoverRetryPeriod, and lease itself.
func leaderTimings(lease time.Duration) (leaseDuration, renew, retry time.Duration) {
	scale := func(d time.Duration) time.Duration {
		return time.Duration(float64(lease) * float64(d) / float64(takeoverLeaseDuration))
	}
	return lease, scale(takeoverRenewDeadline), scale(takeoverRetryPeriod)
}

// expectedTakeover returns the window, counted from the killed leader's last
// renewal, in which a standby takes the Lease: client-go's elector waits one
// lease duration from the moment it first saw that renewal, and tries every
// retry period stretched by up to leaderelection.JitterFactor, so it may see
// the renewal one such period late and try one such period after the lease
// ran out.
func expectedTakeover(lease, retry time.Duration) (earliest, latest time.Duration) {
	jittered := time.Duration(float64(retry) * (1 + leaderelection.JitterFactor))
	return lease, lease + 2*jittered
}

// hubReplica is a hub controller process the benchmark runs itself.
type hubReplica struct {
	name    string
	cmd     *exec.Cmd
	metrics string // URL of its /metrics
	logPath string
	hc      *http.Client
}

// startHubReplica starts the binary of the runner's hub controller shipped
// with its arguments, kubeconfig (its ServiceAccount's token) and
// environment, fresh loopback ports for every listener and extra appended,
// as TestHubFailover starts its standby. The process is killed when b ends.
func startHubReplica(b *testing.B, shipped runner.ProcessInfo, extra []string, name string) *hubReplica {
	b.Helper()
	r := &hubReplica{name: name, hc: &http.Client{Timeout: 2 * time.Second}}
	args := slices.Clone(shipped.Args)
	for i, a := range args {
		flagName, _, ok := strings.Cut(a, "=")
		if !ok || !strings.HasSuffix(flagName, "-bind-address") {
			continue
		}
		port, err := framework.FreePort()
		if err != nil {
			b.Fatal(err)
		}
		args[i] = fmt.Sprintf("%s=127.0.0.1:%d", flagName, port)
		if flagName == "--metrics-bind-address" {
			r.metrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		}
	}
	if r.metrics == "" {
		b.Fatalf("the hub controller serves no metrics: %q", shipped.Args)
	}
	dir := b.TempDir()
	r.logPath = filepath.Join(dir, "hub-"+name+".log")
	logFile, err := os.Create(r.logPath)
	if err != nil {
		b.Fatal(err)
	}
	r.cmd = exec.Command(shipped.Binary, append(args, extra...)...)
	r.cmd.Dir = dir
	r.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, app.PodNamespaceEnv + "=" + config.HubNamespace,
		"KUBECONFIG=" + filepath.Join(shipped.Dir, "kubeconfig")}
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Logf("hub controller %s: pid %d, log %s", name, r.cmd.Process.Pid, r.logPath)
	b.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		_ = logFile.Close()
	})
	return r
}

// leading reports whether the replica says it holds the Lease
// (leader_election_master_status).
func (r *hubReplica) leading(ctx context.Context) (bool, error) {
	m, err := framework.ScrapeMetrics(ctx, r.hc, r.metrics)
	if err != nil {
		return false, fmt.Errorf("hub controller %s: %w", r.name, err)
	}
	return m.Sum("leader_election_master_status", nil) >= 1, nil
}

// campaigning reports whether the replica has started trying to acquire
// the Lease, from its log.
func (r *hubReplica) campaigning(context.Context) (bool, error) {
	out, err := os.ReadFile(r.logPath)
	return strings.Contains(string(out), "acquire leader lease"), err
}

// kill sends SIGKILL to the replica and waits until it is gone.
func (r *hubReplica) kill(b *testing.B) {
	b.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		b.Fatalf("kill hub controller %s: %v", r.name, err)
	}
	_ = r.cmd.Wait()
}

// acceptCluster creates ManagedCluster name accepted by the hub admin
// (spec.hubAcceptsClient), as `kubectl ocm accept` leaves it.
func acceptCluster(ctx context.Context, b *testing.B, hub client.Client, name string) {
	b.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	if err := hub.Create(ctx, mc); err != nil {
		b.Fatalf("create ManagedCluster %s: %v", name, err)
	}
}

// accepted reports whether the hub controller has accepted ManagedCluster
// name: HubAcceptedManagedCluster True, which it sets once the cluster
// namespace and RBAC are applied, and the namespace there.
func accepted(ctx context.Context, hub client.Client, name string) (bool, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return false, err
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		return false, nil
	}
	err := hub.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
	return err == nil, client.IgnoreNotFound(err)
}

// scaleDeployment sets the replicas of Deployment key, as `kubectl scale`
// would.
func scaleDeployment(ctx context.Context, b *testing.B, c client.Client, key client.ObjectKey, replicas int) {
	b.Helper()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
	if err := c.Patch(ctx, dep, patch); err != nil {
		b.Fatalf("scale %s to %d: %v", key, replicas, err)
	}
}
