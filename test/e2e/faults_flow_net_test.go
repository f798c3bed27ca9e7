package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// The leader election settings of every component (controller-runtime's:
// the agent's defaults, and the hub controller's through hubLeaseArgs): a
// leader that has not renewed its lease for the renew deadline stops; it
// tries every retry period.
const (
	leaderRenewDeadline = 10 * time.Second
	leaderRetryPeriod   = 2 * time.Second
)

// restartedSince returns the components whose process is not the one of
// procs, once each runs again.
func (fl *flow) restartedSince(t *testing.T, procs map[string]instance) []string {
	t.Helper()
	var restarted []string
	framework.Eventually(t.Context(), t, time.Minute, "every component running", func(context.Context) (bool, error) {
		now := fl.components(t)
		restarted = nil
		for name, p := range procs {
			if now[name] != p {
				restarted = append(restarted, name)
			}
		}
		return len(now) == len(procs), nil
	})
	slices.Sort(restarted)
	return restarted
}

// restarts restarts the managed cluster's API server, the hub's API server
// and etcd, each while works change: ten works change just before the
// restart, ten just after. Every component reconnects, each changed
// ConfigMap is written once, nothing else is, and the components' LIST
// requests (the API server's count, less the test's own) stay within two
// re-lists per open watch. An outage short enough for every leader to renew
// its lease in time restarts no process.
func (fl *flow) restarts(t *testing.T) {
	for i, tc := range []struct {
		name string
		// restarted is the cluster whose API server restarts, and with it
		// its request counts; nil: none.
		restarted *framework.Cluster
		restart   func(context.Context) error
	}{
		{"managed-apiserver", fl.c1, fl.c1.RestartAPIServer},
		{"hub-apiserver", fl.hub, fl.hub.RestartAPIServer},
		{"etcd", nil, fl.env.RestartEtcd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := fl.components(t)
			before := fl.snapshot(t)
			servers := []*framework.Cluster{fl.hub, fl.c1}
			reqs, own := map[string]map[string]int{}, map[string]int{}
			for _, c := range servers {
				reqs[c.Name], own[c.Name] = requestsByVerb(t, c.RESTConfig()), fl.lists.of(c.Server())
			}
			changed := map[string]bool{}
			change := func(from, to int, version string) {
				for j := from; j < to; j++ {
					name := burstName(20*i + j)
					fl.setVersion(t, name, version)
					changed[name+"-0"] = true
				}
			}
			change(0, 10, tc.name+"-before")
			start := time.Now()
			require.NoError(t, tc.restart(t.Context()))
			restartedIn := time.Since(start)
			// The outage a leader's renewal sees: an API server reconnects
			// to a restarted etcd with backoff, so it may serve writes
			// seconds after etcd is back.
			down := fl.writable(t, start)
			change(10, 20, tc.name+"-after")
			converge := fl.converge(t, start)

			now := fl.snapshot(t)
			for name := range changed {
				assert.Equal(t, 1, now.cms.updated[name]-before.cms.updated[name], "writes to ConfigMap %s, changed once", name)
			}
			cmCreated, cmUpdated, cmDeleted, _ := now.cms.since(before.cms)
			_, amwUpdated, _, amws := now.amws.since(before.amws)
			_, mwUpdated, _, _ := now.mws.since(before.mws)
			assert.Equal(t, len(changed), cmUpdated, "ConfigMap writes")
			assert.Zero(t, cmCreated+cmDeleted, "ConfigMaps created or deleted")
			assert.Empty(t, amws, "AppliedManifestWorks written, whose objects did not change")

			line := ""
			for _, c := range servers {
				after := requestsByVerb(t, c.RESTConfig())
				lists, watches := after["LIST"], after["WATCH"]
				if c != tc.restarted {
					lists -= reqs[c.Name]["LIST"]
					watches -= reqs[c.Name]["WATCH"]
				}
				lists -= fl.lists.of(c.Server()) - own[c.Name]
				open := after["open WATCH"]
				line += fmt.Sprintf(" %[1]s_lists=%[2]d %[1]s_watches=%[3]d %[1]s_open_watches=%[4]d", c.Name, lists, watches, open)
				assert.LessOrEqual(t, lists, 2*open, "LIST requests to %s after the restart, with %d watches open: a re-list storm", c.Name, open)
			}
			restarted := fl.restartedSince(t, procs)
			t.Logf("fault=restart-%s restart=%s down=%s converge=%s changed=%d cm_writes=%d amw_writes=%d mw_writes=%d%s restarted=%v",
				tc.name, restartedIn.Round(100*time.Millisecond), down.Round(100*time.Millisecond), converge.Round(100*time.Millisecond), len(changed), cmUpdated, amwUpdated, mwUpdated, line, restarted)
			// A leader-elected component that cannot renew its lease for
			// the renew deadline stops, and its Deployment's process is
			// started again; an outage that leaves a renewal in time restarts
			// nothing. However long the outage was, a component restarts
			// only for a lease it lost, and only when its lease lives on
			// the API server that went down.
			for _, name := range restarted {
				if tc.restarted != nil && !strings.HasPrefix(name, tc.restarted.Name+"/") {
					t.Errorf("%s restarted, though its lease lives on an API server that stayed up; %s", name, fl.whyRestarted(t, name))
					continue
				}
				last := fl.previousLog(t, name)
				switch {
				case !strings.Contains(last, "leader election lost"):
					t.Errorf("%s restarted after an outage of %s, not for a lost lease; %s\nthe end of its log:\n%s", name, down, fl.whyRestarted(t, name), last)
				case down+leaderRetryPeriod < leaderRenewDeadline:
					t.Errorf("%s lost its lease after an outage of %s, which left it a renewal within its %s renew deadline\nthe end of its log:\n%s", name, down, leaderRenewDeadline, last)
				}
			}
		})
	}
}

// partition cuts cluster1's agent off the hub for longer than the lease,
// with a work changed three times and a new work created meanwhile. The hub
// marks the cluster Unknown within the lease contract; after the path is
// back the cluster turns Available at once and the agent applies the last
// spec of each work, never an older one after a newer.
func (fl *flow) partition(t *testing.T) {
	ctx := t.Context()
	const lease = 10 // seconds
	mc := &clusterv1.ManagedCluster{}
	require.NoError(t, fl.hubc.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc))
	base := mc.DeepCopy()
	mc.Spec.LeaseDurationSeconds = lease
	require.NoError(t, fl.hubc.Patch(ctx, mc, client.MergeFrom(base)))
	renewed := fl.waitLeaseRenewedWithin(t, lease*time.Second*11/10+time.Second)
	const changing, target = "partition-changed", "partition-changed-0"
	require.NoError(t, fl.hubc.Create(ctx, configMapWork("cluster1", changing, 1, "p0")))
	fl.converge(t, time.Now())
	fl.waitAvailable(t, metav1.ConditionTrue)

	procs := fl.components(t)
	before := fl.snapshot(t)
	seen := len(fl.cms.valuesOf(target))
	fl.proxy.Block()
	blocked := time.Now()
	for _, v := range []string{"p1", "p2", "p3"} {
		fl.setVersion(t, changing, v)
	}
	require.NoError(t, fl.hubc.Create(ctx, configMapWork("cluster1", "partition-new", 1, "p1")))
	var unknownAt time.Time
	framework.Eventually(t.Context(), t, 4*lease*time.Second, "cluster1 Unknown", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := fl.hubc.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		if c == nil || c.Status != metav1.ConditionUnknown || c.LastTransitionTime.Time.Before(blocked.Truncate(time.Second)) {
			return false, nil
		}
		unknownAt = c.LastTransitionTime.Time
		return true, nil
	})
	lastRenew := fl.leaseRenewTime(t)
	// The condition's time is in whole seconds.
	afterRenew := unknownAt.Sub(lastRenew.Truncate(time.Second))
	fl.proxy.Unblock()
	unblocked := time.Now()
	fl.waitAvailable(t, metav1.ConditionTrue)
	available := time.Since(unblocked)
	converge := fl.converge(t, unblocked)
	_, cmUpdated, _, _ := fl.snapshot(t).cms.since(before.cms)
	t.Logf("fault=partition lease=%ds renew_interval=%s blocked=%s unknown_after_last_renew=%s contract=%s available_after_unblock=%s converge=%s cm_writes=%d versions_applied=%v",
		lease, renewed.Round(100*time.Millisecond), unblocked.Sub(blocked).Round(100*time.Millisecond), afterRenew.Round(100*time.Millisecond),
		lease*time.Second*2, available.Round(100*time.Millisecond), converge.Round(100*time.Millisecond), cmUpdated, fl.cms.valuesOf(target)[seen:])
	// The hub marks it Unknown two lease durations after the last renewal,
	// never before the lease ran out; a loaded hub may take up to one more
	// lease duration to look (the figure itself is BenchmarkLeaseExpiry's).
	assert.GreaterOrEqual(t, afterRenew, lease*time.Second, "cluster1 turned Unknown before its lease ran out")
	assert.LessOrEqual(t, afterRenew, 3*lease*time.Second, "cluster1 turned Unknown later than three lease durations after its last renewal")
	// The agent retries its lease every second and reports its status on
	// the first renewal that succeeds: Available again before the next
	// lease renewal would be due.
	assert.Less(t, available, lease*time.Second, "cluster1 Available again after the path came back")
	assertInOrder(t, fl.cms.valuesOf(target)[seen:], []string{"p1", "p2", "p3"})
	for _, name := range fl.restartedSince(t, procs) {
		// A leader renews its lease on its own cluster's API server, which
		// the partition leaves alone: a lease lost meanwhile is the
		// machine's load, not the partition, and is reported, not failed.
		// Any other end (a crash, a probe, memory) fails.
		last := fl.previousLog(t, name)
		if strings.Contains(last, "leader election lost") {
			t.Logf("%s lost its lease on an API server the partition did not touch; %s", name, fl.whyRestarted(t, name))
			continue
		}
		t.Errorf("%s restarted during the partition; %s\nthe end of its log:\n%s", name, fl.whyRestarted(t, name), last)
	}
	for i, at := range fl.cms.timesOf(target)[seen:] {
		assert.False(t, at.Before(unblocked), "version %s applied while the agent was cut off the hub", fl.cms.valuesOf(target)[seen+i])
	}
}

// assertInOrder checks that the versions a ConfigMap held are an in-order
// subsequence of want ending with want's last.
func assertInOrder(t *testing.T, got, want []string) {
	t.Helper()
	i := 0
	for _, v := range got {
		for i < len(want) && want[i] != v {
			i++
		}
	}
	require.NotEmpty(t, got)
	assert.Equal(t, want[len(want)-1], got[len(got)-1], "the last version applied, of %v", got)
	assert.Less(t, i, len(want), "versions %v applied out of the hub's order %v", got, want)
}

// writable returns how long after start the hub's and cluster1's API
// servers both accept a write, each tried with a second to answer.
func (fl *flow) writable(t *testing.T, start time.Time) time.Duration {
	t.Helper()
	for name, c := range map[string]client.Client{"hub": fl.hubc, "cluster1": fl.c1c} {
		framework.Eventually(t.Context(), t, 2*time.Minute, "a write accepted by "+name, func(ctx context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "fault-probe"}}
			_, err := controllerutil.CreateOrUpdate(ctx, c, l, func() error {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				return nil
			})
			return err == nil, err
		})
	}
	return time.Since(start)
}

// leaseRenewTime returns the renew time of cluster1's lease on the hub.
func (fl *flow) leaseRenewTime(t *testing.T) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	require.NoError(t, fl.hubc.Get(t.Context(), client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, l))
	return ptr.Deref(l.Spec.RenewTime, metav1.MicroTime{}).Time
}

// waitLeaseRenewedWithin waits until two successive renewals of cluster1's
// lease are at most d apart (the agent has read a new lease duration), and
// returns the interval seen.
func (fl *flow) waitLeaseRenewedWithin(t *testing.T, d time.Duration) time.Duration {
	t.Helper()
	var last time.Time
	var interval time.Duration
	framework.Eventually(t.Context(), t, 2*time.Minute, "cluster1's lease renewed every "+d.String(), func(ctx context.Context) (bool, error) {
		now := fl.leaseRenewTime(t)
		if last.IsZero() || now.Equal(last) {
			last = now
			return false, nil
		}
		interval, last = now.Sub(last), now
		return interval <= d, nil
	})
	return interval
}

// waitAvailable waits until cluster1's ManagedClusterConditionAvailable has
// status.
func (fl *flow) waitAvailable(t *testing.T, status metav1.ConditionStatus) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, "cluster1 Available "+string(status), func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		err := fl.hubc.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc)
		return conditionStatus(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) == status, err
	})
}

// componentParts splits a component's name as components names it,
// cluster/namespace/Deployment.
func componentParts(t *testing.T, component string) (cluster, namespace, name string) {
	t.Helper()
	parts := strings.SplitN(component, "/", 3)
	require.Len(t, parts, 3, "component %q", component)
	return parts[0], parts[1], parts[2]
}

// whyRestarted describes, for a component previousLog does not explain, how
// its last container ended and what the Pod's events say: a liveness probe
// kill or an eviction shows there, not in the log.
func (f *fleet) whyRestarted(t *testing.T, component string) string {
	t.Helper()
	cluster, namespace, name := componentParts(t, component)
	ctx := t.Context()
	pod, err := f.runningPod(ctx, cluster, namespace, name)
	if err != nil || pod == nil {
		return fmt.Sprintf("its Pod is not found (%v)", err)
	}
	out := fmt.Sprintf("Pod %s, %d restarts", pod.Name, pod.Status.ContainerStatuses[0].RestartCount)
	if term := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated; term != nil {
		out += fmt.Sprintf("; the last container ended %s: exit code %d, reason %q %s",
			term.FinishedAt.UTC().Format(time.RFC3339), term.ExitCode, term.Reason, term.Message)
	}
	events, err := f.env.Cluster(cluster).Clientset().CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod.Name,
	})
	if err != nil {
		return out + fmt.Sprintf("; its events: %v", err)
	}
	for _, e := range events.Items {
		out += fmt.Sprintf("\nevent %s x%d %s: %s", e.LastTimestamp.UTC().Format(time.RFC3339), e.Count, e.Reason, e.Message)
	}
	return out
}

// previousLog returns the last lines the instance of component (as
// components names it: cluster/namespace/Deployment) that ran before the
// current one wrote.
func (fl *flow) previousLog(t *testing.T, component string) string {
	t.Helper()
	cluster, namespace, name := componentParts(t, component)
	var logs []byte
	framework.Eventually(t.Context(), t, time.Minute, "the previous log of "+component, func(ctx context.Context) (bool, error) {
		pod, err := fl.runningPod(ctx, cluster, namespace, name)
		if err != nil || pod == nil {
			return false, err
		}
		logs, err = fl.env.Cluster(cluster).Clientset().CoreV1().Pods(namespace).
			GetLogs(pod.Name, &corev1.PodLogOptions{Previous: true, TailLines: ptr.To[int64](50)}).DoRaw(ctx)
		return err == nil, err
	})
	return string(logs)
}
