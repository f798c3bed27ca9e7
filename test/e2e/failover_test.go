package e2e

import (
	"context"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// hubLease is the hub controller's leader election Lease.
var hubLease = client.ObjectKey{Namespace: hubNamespace, Name: "ocm-hub-controller.open-cluster-management.io"}

// testHubFailover runs a second replica of the hub controller next to the
// one the runner runs, both with leader election, and kills the leader
// (SIGKILL). The standby writes nothing while the leader lives, takes the
// Lease within the lease settings, and then acts on objects created after
// the kill, without writing again what the leader had written and without
// dropping a decision.
func testHubFailover(t *testing.T) {
	parallel(t)
	f := startFleetWithHubArgs(t, shortLeaseArgs, "hub")
	f.hubInit(t)
	hub := f.env.Cluster("hub").Client()
	ctx := t.Context()
	const ns = "failover"
	clusters := []string{"sim-a", "sim-b"}
	simulateClusters(t, hub, map[string]string{"fleet": "yes"}, clusters...)
	require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	bindDefaultSet(t, f, hub, ns)

	leader, ok := f.runner.Process("hub", hubNamespace, hubController)
	require.True(t, ok && leader.Pid != 0, "the hub controller is not running")
	var holder string
	framework.Eventually(t.Context(), t, time.Minute, "the hub controller to hold its Lease", func(ctx context.Context) (bool, error) {
		l := &coordinationv1.Lease{}
		err := hub.Get(ctx, hubLease, l)
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
		return err == nil && holder != "", client.IgnoreNotFound(err)
	})
	standby := startStandby(t, leader)

	// While the leader lives, it alone acts; the standby only reads.
	require.NoError(t, hub.Create(ctx, fleetPlacement(ns, "before")))
	require.NoError(t, hub.Create(ctx, allAtOnceSet(ns, "before")))
	before := waitSetWorks(t, hub, ns, "before", len(clusters))
	standbyWrites, err := standby.writes(ctx)
	require.NoError(t, err)
	assert.Zero(t, standbyWrites, "the standby wrote to the hub while the leader was alive")
	decisions := watchDecisions(t, f.env.Cluster("hub"), ns)

	killed := time.Now()
	require.NoError(t, syscall.Kill(leader.Pid, syscall.SIGKILL))
	// The killed leader renews no more: the renewal the Lease holds now is
	// its last, unless the standby took over already.
	lastRenew := &coordinationv1.Lease{}
	require.NoError(t, hub.Get(ctx, hubLease, lastRenew))
	require.NoError(t, hub.Create(ctx, fleetPlacement(ns, "after")))
	require.NoError(t, hub.Create(ctx, allAtOnceSet(ns, "after")))
	var newHolder string
	taken := &coordinationv1.Lease{}
	framework.Eventually(t.Context(), t, time.Minute, "another replica to take the Lease", func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, hubLease, taken)
		newHolder = ptr.Deref(taken.Spec.HolderIdentity, "")
		return err == nil && newHolder != "" && newHolder != holder, err
	})
	takeover := time.Since(killed)
	// Measured on the Lease itself, so that the test's own polling and a
	// loaded machine's delays do not count: a standby takes the Lease no
	// sooner than one lease duration after the last renewal it saw (never
	// two leaders), and, retrying every retry period, within two.
	require.Equal(t, holder, ptr.Deref(lastRenew.Spec.HolderIdentity, ""), "the Lease changed hands as the leader was killed")
	require.NotNil(t, lastRenew.Spec.RenewTime, "the killed leader's Lease has no renew time")
	require.NotNil(t, taken.Spec.AcquireTime, "the standby's Lease has no acquire time")
	leaseDuration := time.Duration(ptr.Deref(lastRenew.Spec.LeaseDurationSeconds, 0)) * time.Second
	gap := taken.Spec.AcquireTime.Sub(lastRenew.Spec.RenewTime.Time)
	t.Logf("lease duration %s, last renewal of the killed leader to the standby's acquisition %s", leaseDuration, gap.Round(time.Millisecond))
	assert.GreaterOrEqual(t, gap, leaseDuration, "the standby took the Lease before the killed leader's lease ran out")
	assert.Less(t, gap, 2*leaseDuration, "the standby took the Lease later than two lease durations after the last renewal, with %v", shortLeaseArgs)
	framework.Eventually(t.Context(), t, time.Minute, "placement after to select "+fmt.Sprint(clusters), func(ctx context.Context) (bool, error) {
		got, err := framework.DecidedClusters(ctx, hub, ns, "after")
		return slices.Equal(got, clusters), err
	})
	decided := time.Since(killed)
	after := waitSetWorks(t, hub, ns, "after", len(clusters))
	worked := time.Since(killed)
	isLeader, err := metricSum(ctx, standby.metrics, "leader_election_master_status", nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, isLeader, "the standby is not the one that took over")
	// The same metric counts the new leader's writes, so the zero above was
	// a count and not a missing metric.
	leaderWrites, err := standby.writes(ctx)
	require.NoError(t, err)
	assert.Positive(t, leaderWrites, "the new leader's client metrics count no writes")

	// Nothing the old leader wrote is written again, nothing is duplicated.
	now, err := setWorks(ctx, hub, ns, "before")
	require.NoError(t, err)
	rewrites := 0
	for c, mw := range before {
		if now[c].ResourceVersion != mw.ResourceVersion {
			rewrites++
			t.Errorf("the new leader wrote the ManifestWork %s/%s again", c, mw.Name)
		}
	}
	assert.Len(t, after, len(clusters), "one ManifestWork per cluster")
	list := &workv1.ManifestWorkList{}
	require.NoError(t, hub.List(ctx, list))
	assert.Len(t, list.Items, 2*len(clusters), "ManifestWorks on the hub")
	changes, removed, _ := decisions.snapshot()
	assert.Empty(t, removed, "clusters dropped from the decisions across the failover")
	t.Logf("fault=hub-failover takeover=%s first-decision=%s first-work=%s standby-writes-while-leader-alive=%d rewrites=%d decision-changes=%d decision-removals=%d lease=%v",
		takeover.Round(time.Millisecond), decided.Round(time.Millisecond), worked.Round(time.Millisecond),
		int(standbyWrites), rewrites, changes, len(removed), shortLeaseArgs)
}

// allAtOnceSet is a ManifestWorkReplicaSet of one ConfigMap for the
// Placement of the same name, rolled out to all its clusters at once.
func allAtOnceSet(ns, name string) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				manifest(configMap("default", name, map[string]string{"version": "v1"})),
			}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: name, RolloutStrategy: clusterv1alpha1.RolloutStrategy{
				Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("100%")},
			}}},
		},
	}
}

// standbyReplica is a second hub controller process the test runs itself.
type standbyReplica struct {
	metrics string // the URL of its /metrics
}

// writes returns how many create, update, patch and delete requests the
// replica has sent to the hub, from its client metrics.
func (s *standbyReplica) writes(ctx context.Context) (float64, error) {
	var sum float64
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		n, err := metricSum(ctx, s.metrics, "rest_client_requests_total", map[string]string{"method": m})
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// standbyLeaseArgs are shortLeaseArgs with a retry period of 200ms.
var standbyLeaseArgs = []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=200ms"}

// startStandby starts a second replica of the process the runner runs as
// leader: the same binary and arguments, its kubeconfig and namespace, and
// fresh loopback ports for every listener. It waits until the replica is
// ready and campaigns for the Lease, and kills it when t ends.
//
// The standby runs with standbyLeaseArgs: the leader's lease timings but a
// retry period of 200ms. The runner restarts a killed leader after a second,
// and that new replica competes for the Lease too: it counts the lease
// duration from its own first look, a second or more after the kill, while
// a standby that looks every 200ms counts it from the last renewal and wins.
// With the leader's 1s retry period (jittered up to 2.2s) the standby could
// have seen the last renewal as late as the restarted replica does.
func startStandby(t *testing.T, leader runner.ProcessInfo) *standbyReplica {
	t.Helper()
	s := &standbyReplica{}
	var health string
	args := slices.Clone(leader.Args)
	for i, a := range args {
		name, _, ok := strings.Cut(a, "=")
		if !ok || !strings.HasSuffix(name, "-bind-address") {
			continue
		}
		port, err := framework.FreePort()
		require.NoError(t, err)
		args[i] = fmt.Sprintf("%s=127.0.0.1:%d", name, port)
		switch name {
		case "--metrics-bind-address":
			s.metrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		case "--health-probe-bind-address":
			health = fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
		}
	}
	require.NotEmpty(t, s.metrics, "the leader serves no metrics")
	require.NotEmpty(t, health, "the leader serves no readiness probe")
	dir := t.TempDir()
	logPath := filepath.Join(dir, "standby.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	// leader.Binary is the wrapper that appends shortLeaseArgs; the standby
	// runs the binary itself with its own.
	cmd := exec.Command(bins.ocmController, append(args, standbyLeaseArgs...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "POD_NAMESPACE=" + hubNamespace,
		"KUBECONFIG=" + filepath.Join(leader.Dir, "kubeconfig")}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	t.Logf("standby hub controller: pid %d, log %s", cmd.Process.Pid, logPath)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("standby log:\n%s", out)
			}
		}
	})
	framework.Eventually(t.Context(), t, time.Minute, "the standby ready and campaigning for the Lease", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		out, err := os.ReadFile(logPath)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(out), "acquire leader lease"), err
	})
	return s
}
