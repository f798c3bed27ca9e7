package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// opPoll is the interval of the polls that time an operation (one object
// read each): it bounds their resolution.
const opPoll = 100 * time.Millisecond

// runOps times every operation of step, each in a window of its own.
func runOps(ctx context.Context, b *testing.B, o *observer, h *benchkit.SimHub, hubArgs *hubArgs, step *Step) {
	b.Helper()
	n := step.Clusters
	probe := fmt.Sprintf("probe-%05d", n)
	timed := func(name string, op func() (time.Duration, string)) {
		w := o.begin(ctx, b)
		took, detail := op()
		step.Ops[name] = o.end(ctx, b, w).op(took, detail)
		b.Logf("step %d: %s took %s (%s)", n, name, benchkit.Seconds(took), detail)
	}
	var stopProbe func()
	timed(OpJoin, func() (time.Duration, string) {
		var took time.Duration
		took, stopProbe = joinProbe(ctx, b, o, h, probe)
		return took, "one more cluster by a simulated agent: ManagedCluster → Available"
	})
	expected, err := availableClusters(ctx, o.c)
	if err != nil {
		b.Fatal(err)
	}
	placement := fmt.Sprintf("all-%05d", n)
	timed(OpPlacement, func() (time.Duration, string) {
		return schedule(ctx, b, o.c, placement, expected), fmt.Sprintf("%d clusters decided", expected)
	})
	profile := o.profileAPIServer(ctx, rolloutProfile, fmt.Sprintf("apiserver-cpu-rollout-all-%05d.pb.gz", n))
	timed(OpRolloutAll, func() (time.Duration, string) {
		return rollout(ctx, b, o.c, placement, "all", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}, expected),
			fmt.Sprintf("%d works Applied", expected)
	})
	op := step.Ops[OpRolloutAll]
	op.Profile = keepProfile(b, o, fmt.Sprintf("step %d: %s", n, OpRolloutAll), time.Duration(op.Seconds*float64(time.Second)), rolloutProfile, profile)
	step.Ops[OpRolloutAll] = op
	progressive := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("10%")}}
	timed(OpRolloutProgressive, func() (time.Duration, string) {
		return rollout(ctx, b, o.c, placement, "progressive", progressive, expected), fmt.Sprintf("%d works Applied, 10 %% at a time", expected)
	})
	if *baselineHubArgs != "" {
		hubArgs.set(b, *baselineHubArgs)
		took, _, _ := restartHub(ctx, b, o, n, syscall.SIGTERM)
		hubArgs.check(b, o.f.Pid("hub", config.HubNamespace, benchkit.HubController), *baselineHubArgs)
		b.Logf("step %d: hub controller restarted with %s in %s", n, *baselineHubArgs, benchkit.Seconds(took))
		timed(OpRolloutAllBaseline, func() (time.Duration, string) {
			return rollout(ctx, b, o.c, placement, "all-baseline", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}, expected),
				fmt.Sprintf("%d works Applied, hub controller with %s", expected, *baselineHubArgs)
		})
		hubArgs.set(b, "")
		took, _, _ = restartHub(ctx, b, o, n, syscall.SIGTERM)
		b.Logf("step %d: hub controller restarted as shipped in %s", n, benchkit.Seconds(took))
	}
	if err := o.c.Delete(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: placement}}); err != nil {
		b.Fatal(err)
	}
	timed(OpUnknown, func() (time.Duration, string) {
		fromStop, fromRenewal := stopAndWaitUnknown(ctx, b, o.c, probe, stopProbe)
		lease := float64(*probeLeaseSeconds)
		return fromStop, fmt.Sprintf("lease %d s: %.2f × lease from the stop, %.2f × from the last renewal", *probeLeaseSeconds, fromStop.Seconds()/lease, fromRenewal.Seconds()/lease)
	})
	// The probe leaves the fleet, so that every step counts only the
	// clusters it registered.
	if err := o.c.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: probe}}); err != nil {
		b.Fatal(err)
	}
	timed(OpHubStop, func() (time.Duration, string) {
		took, _, detail := restartHub(ctx, b, o, n, syscall.SIGTERM)
		return took, detail
	})
	var relist time.Duration
	timed(OpHubRestart, func() (time.Duration, string) {
		var took time.Duration
		var detail string
		took, relist, detail = restartHub(ctx, b, o, n, syscall.SIGKILL)
		return took, detail
	})
	restart := step.Ops[OpHubRestart]
	step.Ops[OpHubRelist] = Op{Seconds: relist.Seconds(), Detail: "from the lead to every work queue drained, at least one reconcile per cluster",
		RequestsPerSecond: restart.RequestsPerSecond, WritesPerSecond: restart.WritesPerSecond}
}

// rolloutProfile is how long the API server's CPU is sampled from the
// start of the rollout to every cluster.
const rolloutProfile = 15 * time.Second

// registerProfile is how long the API server's CPU is sampled from the
// start of a step's registrations.
const registerProfile = 30 * time.Second

// keepProfile waits for the profile of an operation that took took,
// sampled for d from its start, and returns it if the operation lasted the
// whole profile; a shorter operation's profile would sample the hub after
// it, and is removed. what names the operation in the log.
func keepProfile(b *testing.B, o *observer, what string, took, d time.Duration, profile func() (*CPUProfile, error)) *CPUProfile {
	b.Helper()
	p, err := profile()
	if err != nil {
		b.Errorf("%s: %v", what, err)
		return nil
	}
	if took < d {
		b.Logf("%s took less than its %s profile: not kept", what, d)
		if err := os.Remove(filepath.Join(o.profileDir, p.File)); err != nil {
			b.Error(err)
		}
		return nil
	}
	b.Logf("%s: kube-apiserver CPU over its first %s: %s", what, d, p.Summary())
	return p
}

// joinProbe joins cluster with a simulated agent polling at join speed and
// a lease of -probe-lease-seconds (its ManagedCluster is created first by
// the admin with that lease; the agent finds it there) and returns the time
// from the agent's start to Available, with the function that stops it.
func joinProbe(ctx context.Context, b *testing.B, o *observer, h *benchkit.SimHub, cluster string) (time.Duration, func()) {
	b.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: clusterv1.ManagedClusterSpec{LeaseDurationSeconds: int32(*probeLeaseSeconds)}}
	if err := o.c.Create(ctx, mc); err != nil {
		b.Fatalf("create ManagedCluster %s: %v", cluster, err)
	}
	start := time.Now()
	stop := benchkit.StartSimAgent(ctx, b, h, cluster)
	return time.Since(start), stop
}

// schedule creates Placement name over the global set and waits until its
// decisions list want clusters.
func schedule(ctx context.Context, b *testing.B, c client.Client, name string, want int) time.Duration {
	b.Helper()
	start := time.Now()
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: name}}
	if err := c.Create(ctx, p); err != nil {
		b.Fatalf("create Placement %s: %v", name, err)
	}
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, fmt.Sprintf("Placement %s to decide %d clusters", name, want), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err
		}
		if p.Status.NumberOfSelectedClusters < int32(want) {
			return false, nil
		}
		decisions := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, decisions, client.InNamespace(workNamespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
			return false, err
		}
		n := 0
		for i := range decisions.Items {
			n += len(decisions.Items[i].Status.Decisions)
		}
		return n >= want, nil
	})
	return time.Since(start)
}

// rollout creates a ManifestWorkReplicaSet of one ConfigMap over placement
// with strategy, waits until want works are Applied, then deletes it and
// waits until its works are gone (not timed: the next operation starts from
// a hub without them).
func rollout(ctx context.Context, b *testing.B, c client.Client, placement, name string, strategy clusterv1alpha1.RolloutStrategy, want int) time.Duration {
	b.Helper()
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "scale-" + name}, Data: map[string]string{"placement": placement}}
	raw, err := json.Marshal(cm)
	if err != nil {
		b.Fatal(err)
	}
	set := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: strategy}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, set); err != nil {
		b.Fatalf("create ManifestWorkReplicaSet %s: %v", name, err)
	}
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, fmt.Sprintf("ManifestWorkReplicaSet %s Applied on %d clusters", name, want), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return false, err
		}
		return set.Status.Summary.Applied >= want, nil
	})
	took := time.Since(start)
	if err := c.Delete(ctx, set); err != nil {
		b.Fatal(err)
	}
	benchkit.Poll(ctx, b, time.Second, *stepTimeout, fmt.Sprintf("the works of ManifestWorkReplicaSet %s deleted", name), func(ctx context.Context) (bool, error) {
		works := &workv1.ManifestWorkList{}
		err := c.List(ctx, works, client.Limit(1),
			client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: workNamespace + "." + name})
		return len(works.Items) == 0, err
	})
	return took
}

// stopAndWaitUnknown stops cluster's agent and waits until the hub shows
// it Unknown; it returns the time from the stop and from the lease's last
// renewal.
func stopAndWaitUnknown(ctx context.Context, b *testing.B, c client.Client, cluster string, stop func()) (fromStop, fromRenewal time.Duration) {
	b.Helper()
	stop()
	stopped := time.Now()
	mc := &clusterv1.ManagedCluster{}
	at := benchkit.Poll(ctx, b, opPoll, *stepTimeout, cluster+" Unknown", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		return cond != nil && cond.Status == metav1.ConditionUnknown, nil
	})
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, lease); err != nil {
		b.Fatal(err)
	}
	fromRenewal = at.Sub(ptr.Deref(lease.Spec.RenewTime, metav1.MicroTime{Time: stopped}).Time)
	return at.Sub(stopped), fromRenewal
}

// restartHub stops the hub controller with sig and waits until its
// successor is ready, leads, and has drained every work queue with at least
// one reconcile per cluster. SIGTERM is a graceful stop, as a rolling update
// or a drained node gives: the hub controller releases its leader lease as
// it exits, and its successor takes it at once. SIGKILL is a crash: the
// successor waits out the lease the killed leader held. It returns the time
// from the signal to that, the part of it after the successor took the
// lead, and the stages in the detail.
func restartHub(ctx context.Context, b *testing.B, o *observer, clusters int, sig syscall.Signal) (took, relist time.Duration, detail string) {
	b.Helper()
	f := o.f
	old := f.Pid("hub", config.HubNamespace, benchkit.HubController)
	killed := time.Now()
	if err := syscall.Kill(old, sig); err != nil {
		b.Fatalf("signal the hub controller (pid %d, %v): %v", old, sig, err)
	}
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, "a new hub controller process", func(context.Context) (bool, error) {
		pid := f.Pid("hub", config.HubNamespace, benchkit.HubController)
		return pid != 0 && pid != old, nil
	})
	f.WaitReady(ctx, b, "hub", config.HubNamespace, benchkit.HubController)
	ready := time.Since(killed)
	hc := &http.Client{Timeout: 5 * time.Second}
	var leading time.Duration
	quiet := 0
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, "the new hub controller to lead and drain its work queues", func(ctx context.Context) (bool, error) {
		// Looked up at every poll: a hub controller that loses its leader
		// lease exits and the runner starts another, on other ports.
		info, _ := f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)
		url := "http://" + benchkit.FlagValue(info.Args, "--metrics-bind-address") + "/metrics"
		m, err := framework.ScrapeMetrics(ctx, hc, url)
		if err != nil {
			return false, err
		}
		// Without leader election the metric is absent and the process
		// leads from its start.
		if _, elects := m["leader_election_master_status"]; elects && m.Sum("leader_election_master_status", nil) < 1 {
			return false, nil
		}
		if leading == 0 {
			leading = time.Since(killed)
		}
		idle := m.Sum("workqueue_depth", nil) == 0 && m.Sum("controller_runtime_active_workers", nil) == 0 &&
			m.Sum("controller_runtime_reconcile_total", nil) >= float64(clusters)
		if !idle {
			quiet = 0
			return false, nil
		}
		quiet++
		return quiet >= 3, nil
	})
	took = time.Since(killed)
	why := "the stopped leader released its lease"
	if sig == syscall.SIGKILL {
		why = "the killed leader's lease ran out"
	}
	return took, took - leading, fmt.Sprintf("%v: ready %.2f s, leading %.2f s (%s), reconciled %.2f s after leading",
		sig, ready.Seconds(), leading.Seconds(), why, (took - leading).Seconds())
}
