// Package faults drives and observes the disruptions that the tests and
// benchmarks of a fleet put it through: the workload failover scenario
// (Failover, with CutAgent to cut a cluster off its hub), and observers
// that record what a disruption showed of the fleet (WatchFleet: the
// managed clusters' availability and lease renewals on the hub;
// WatchObjects: deletions and re-creations of a cluster's objects).
package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Failover is the workload failover scenario: two joined clusters, a
// Placement of one cluster that tolerates the unreachable taint for
// TolerationSeconds, and two ManifestWorkReplicaSets of it, each delivering
// a Deployment: App with the default delete option, Kept with Orphan. The
// decided cluster's agent is killed and cut off the hub (Cut); the hub marks
// the cluster Unknown, taints it unreachable, and once the toleration runs
// out the Placement moves to the other cluster and the sets follow. Then the
// path comes back (Restore): App's old copy is removed, Kept's stays.
//
// Every PollEvery the scenario counts the copies of each application that
// are Available on the clusters (read on their API servers directly, which
// the cut does not touch) and the Placement's decisions, so that a test can
// check that the hub never decided more than one cluster and that no window
// of zero copies opened once the replacement was Available.
type Failover struct {
	Hub *framework.Cluster
	// Clusters are the two joined clusters, by name.
	Clusters map[string]*framework.Cluster
	// Cut kills the named cluster's agent and cuts its path to the hub, so
	// that the agent that comes back cannot reach it; Restore gives the
	// path back.
	Cut, Restore func(cluster string) error
	// Namespace on the hub holds the Placement and the sets; the
	// applications go to namespaces App and Kept on the clusters.
	Namespace, App, Kept string
	// LeaseSeconds is the clusters' spec.leaseDurationSeconds;
	// TolerationSeconds the Placement's toleration of the unreachable taint.
	LeaseSeconds      int32
	TolerationSeconds int64
	PollEvery         time.Duration

	mu      sync.Mutex
	samples []FailoverSample
}

// FailoverSample is one count of the copies and decisions.
type FailoverSample struct {
	At time.Time
	// Available is, per application namespace, the clusters whose
	// Deployment has an Available replica.
	Available map[string][]string
	// Decided is the Placement's decided clusters.
	Decided []string
}

// FailoverReport is what the scenario measured. Every duration is counted
// from the agent's death (Cut), except Removed, counted from Restore.
type FailoverReport struct {
	Lost, Spare string
	// Unknown: the hub reports the lost cluster's availability Unknown;
	// Tainted: the unreachable taint's timeAdded; Moved: the Placement
	// decides the spare cluster; Created: App's work on the spare cluster
	// exists; Available: App's Deployment is Available there.
	Unknown, Tainted, Moved, Created, Available time.Duration
	// Removed: after Restore, App's Deployment is gone from the lost
	// cluster; KeptStays: Kept's Deployment was still there, unowned, when
	// its work was gone.
	Removed   time.Duration
	KeptStays bool
	// MaxDecided is the most clusters the Placement decided at once;
	// ZeroWindow the longest time App had no Available copy after the
	// spare's was first seen Available; Overlap how long App ran on both
	// clusters after Restore (the lost cluster's copy, cut off from the hub,
	// runs until its agent reconnects and removes it).
	MaxDecided int
	ZeroWindow time.Duration
	Overlap    time.Duration
	Samples    int
}

// String is the report as key=value pairs, in seconds.
func (r FailoverReport) String() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	return fmt.Sprintf("lost=%s spare=%s unknown=%s tainted=%s moved=%s work_created=%s available=%s removed_after_restore=%s kept_stays=%v max_decided=%d zero_copy_window=%s overlap_after_restore=%s samples=%d",
		r.Lost, r.Spare, s(r.Unknown), s(r.Tainted), s(r.Moved), s(r.Created), s(r.Available), s(r.Removed), r.KeptStays, r.MaxDecided, s(r.ZeroWindow), s(r.Overlap), r.Samples)
}

// Run runs the scenario and returns what it measured; it fails tb when a
// step does not happen within its deadline. The clusters must be joined,
// accepted and members of the ManagedClusterSet default.
func (f *Failover) Run(ctx context.Context, tb testing.TB) FailoverReport {
	tb.Helper()
	lost, spare := f.setUp(ctx, tb)
	stop := f.watch(ctx)
	defer stop()

	r := FailoverReport{Lost: lost, Spare: spare}
	cut := time.Now()
	if err := f.Cut(lost); err != nil {
		tb.Fatalf("cut %s off the hub: %v", lost, err)
	}
	f.measureFailover(ctx, tb, &r, cut)

	restored := time.Now()
	if err := f.Restore(lost); err != nil {
		tb.Fatalf("restore %s's path to the hub: %v", lost, err)
	}
	f.measureRestore(ctx, tb, &r, restored)
	// One more sample after the removal, so the counts cover it.
	f.sample(ctx)
	stop()
	f.summarize(&r, spare, restored)
	return r
}

// setUp prepares the scenario and waits until the Placement decides one
// cluster, the one to lose, and both applications are Available there; it
// returns that cluster and the other one, the spare.
func (f *Failover) setUp(ctx context.Context, tb testing.TB) (lost, spare string) {
	tb.Helper()
	f.prepare(ctx, tb)
	framework.Eventually(ctx, tb, 2*time.Minute, "the failover Placement to decide one cluster", func(ctx context.Context) (bool, error) {
		d, err := f.decided(ctx)
		if len(d) == 1 {
			lost = d[0]
		}
		return len(d) == 1, err
	})
	for name := range f.Clusters {
		if name != lost {
			spare = name
		}
	}
	for _, app := range []string{f.App, f.Kept} {
		framework.Eventually(ctx, tb, 3*time.Minute, "Deployment "+app+" Available on "+lost, func(ctx context.Context) (bool, error) {
			return f.available(ctx, lost, app)
		})
	}
	return lost, spare
}

// measureFailover waits, after the lost cluster was cut off at cut, until
// the hub reports it Unknown and taints it, the Placement moves to the
// spare and both applications are Available there, and records when in r.
func (f *Failover) measureFailover(ctx context.Context, tb testing.TB, r *FailoverReport, cut time.Time) {
	tb.Helper()
	hub := f.Hub.Client()
	lost, spare := r.Lost, r.Spare
	since := func() time.Duration { return time.Since(cut) }
	deadline := time.Duration(f.LeaseSeconds)*5*time.Second + time.Duration(f.TolerationSeconds)*time.Second + 3*time.Minute
	framework.Eventually(ctx, tb, deadline, lost+" Unknown on the hub", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: lost}, mc); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		if c == nil || c.Status != metav1.ConditionUnknown {
			return false, nil
		}
		r.Unknown = since()
		return true, nil
	})
	framework.Eventually(ctx, tb, time.Minute, lost+" tainted unreachable", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: lost}, mc); err != nil {
			return false, err
		}
		for _, t := range mc.Spec.Taints {
			if t.Key == clusterv1.ManagedClusterTaintUnreachable {
				// timeAdded is in whole seconds.
				r.Tainted = t.TimeAdded.Sub(cut.Truncate(time.Second))
				return true, nil
			}
		}
		return false, nil
	})
	framework.Eventually(ctx, tb, deadline, "the Placement to move to "+spare, func(ctx context.Context) (bool, error) {
		d, err := f.decided(ctx)
		r.Moved = since()
		return slices.Equal(d, []string{spare}), err
	})
	framework.Eventually(ctx, tb, time.Minute, "the work of "+f.App+" on "+spare, func(ctx context.Context) (bool, error) {
		r.Created = since()
		err := hub.Get(ctx, client.ObjectKey{Namespace: spare, Name: f.App}, &workv1.ManifestWork{})
		return err == nil, client.IgnoreNotFound(err)
	})
	framework.Eventually(ctx, tb, 3*time.Minute, "Deployment "+f.App+" Available on "+spare, func(ctx context.Context) (bool, error) {
		r.Available = since()
		return f.available(ctx, spare, f.App)
	})
	framework.Eventually(ctx, tb, 3*time.Minute, "Deployment "+f.Kept+" Available on "+spare, func(ctx context.Context) (bool, error) {
		return f.available(ctx, spare, f.Kept)
	})
}

// measureRestore waits, after the lost cluster's path came back at
// restored, until App's copy is gone from it and the hub has removed its
// works, and records in r when, and whether Kept's copy stayed.
func (f *Failover) measureRestore(ctx context.Context, tb testing.TB, r *FailoverReport, restored time.Time) {
	tb.Helper()
	hub := f.Hub.Client()
	lost := r.Lost
	framework.Eventually(ctx, tb, 3*time.Minute, "Deployment "+f.App+" removed from "+lost, func(ctx context.Context) (bool, error) {
		r.Removed = time.Since(restored)
		err := f.Clusters[lost].Client().Get(ctx, client.ObjectKey{Namespace: f.App, Name: "app"}, &appsv1.Deployment{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	framework.Eventually(ctx, tb, 3*time.Minute, "the works of "+lost+" gone from the hub", func(ctx context.Context) (bool, error) {
		works := &workv1.ManifestWorkList{}
		if err := hub.List(ctx, works, client.InNamespace(lost)); err != nil {
			return false, err
		}
		for _, w := range works.Items {
			if w.Name == f.App || w.Name == f.Kept {
				return false, nil
			}
		}
		return true, nil
	})
	d := &appsv1.Deployment{}
	err := f.Clusters[lost].Client().Get(ctx, client.ObjectKey{Namespace: f.Kept, Name: "app"}, d)
	r.KeptStays = err == nil && d.DeletionTimestamp == nil
}

// prepare sets the clusters' lease, binds the set default to Namespace and
// creates the Placement and the sets.
func (f *Failover) prepare(ctx context.Context, tb testing.TB) {
	tb.Helper()
	f.setLeases(ctx, tb)
	hub := f.Hub.Client()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace}}
	require.NoError(tb, client.IgnoreAlreadyExists(hub.Create(ctx, ns)), "create namespace "+f.Namespace)
	framework.Eventually(ctx, tb, time.Minute, "ManagedClusterSet default", func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, client.ObjectKey{Name: "default"}, &clusterv1beta2.ManagedClusterSet{})
		return err == nil, client.IgnoreNotFound(err)
	})
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "default"},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
	}
	require.NoError(tb, client.IgnoreAlreadyExists(hub.Create(ctx, binding)), "bind the set default")
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "failover"},
		Spec: clusterv1beta1.PlacementSpec{
			NumberOfClusters: ptr.To[int32](1),
			Tolerations: []clusterv1beta1.Toleration{{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists,
				TolerationSeconds: ptr.To(f.TolerationSeconds)}},
		},
	}
	require.NoError(tb, hub.Create(ctx, placement), "create the Placement")
	for _, app := range []string{f.App, f.Kept} {
		w, err := framework.AppWork("", app, app)
		require.NoError(tb, err, "render "+app)
		if app == f.Kept {
			w.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
		}
		set := &workv1alpha1.ManifestWorkReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: app},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
				ManifestWorkTemplate: w.Spec,
				PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "failover",
					RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}}},
			},
		}
		require.NoError(tb, hub.Create(ctx, set), "create ManifestWorkReplicaSet "+app)
	}
}

// setLeases sets the clusters' spec.leaseDurationSeconds to LeaseSeconds
// and waits until their agents renew at the new duration, once they have
// read it.
func (f *Failover) setLeases(ctx context.Context, tb testing.TB) {
	tb.Helper()
	hub := f.Hub.Client()
	for name := range f.Clusters {
		mc := &clusterv1.ManagedCluster{}
		require.NoError(tb, hub.Get(ctx, client.ObjectKey{Name: name}, mc), "read ManagedCluster "+name)
		base := mc.DeepCopy()
		mc.Spec.LeaseDurationSeconds = f.LeaseSeconds
		require.NoError(tb, hub.Patch(ctx, mc, client.MergeFrom(base)), "set the lease of "+name)
	}
	for name := range f.Clusters {
		var last time.Time
		framework.Eventually(ctx, tb, 2*time.Minute, name+"'s lease renewed at its new duration", func(ctx context.Context) (bool, error) {
			l := &coordinationv1.Lease{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: name, Name: clusterv1.LeaseName}, l); err != nil {
				return false, err
			}
			now := ptr.Deref(l.Spec.RenewTime, metav1.MicroTime{}).Time
			gap := now.Sub(last)
			if now.Equal(last) || last.IsZero() {
				last = now
				return false, nil
			}
			last = now
			return gap <= time.Duration(f.LeaseSeconds)*time.Second*11/10+time.Second, nil
		})
	}
}

// decided returns the Placement's decided clusters, sorted.
func (f *Failover) decided(ctx context.Context) ([]string, error) {
	return framework.DecidedClusters(ctx, f.Hub.Client(), f.Namespace, "failover")
}

// available reports whether Deployment app of namespace app (AppWork's) on
// cluster has an Available replica.
func (f *Failover) available(ctx context.Context, cluster, app string) (bool, error) {
	d := &appsv1.Deployment{}
	if err := f.Clusters[cluster].Client().Get(ctx, client.ObjectKey{Namespace: app, Name: "app"}, d); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return d.DeletionTimestamp == nil && deploystatus.Of(d).Serving, nil
}

// watch samples every PollEvery until the returned stop is called.
func (f *Failover) watch(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(f.PollEvery)
		defer tick.Stop()
		for {
			f.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}

// sample records one count; a failed read skips the sample.
func (f *Failover) sample(ctx context.Context) {
	s := FailoverSample{At: time.Now(), Available: map[string][]string{}}
	for name := range f.Clusters {
		for _, app := range []string{f.App, f.Kept} {
			ok, err := f.available(ctx, name, app)
			if err != nil {
				return
			}
			if ok {
				s.Available[app] = append(s.Available[app], name)
			}
		}
	}
	d, err := f.decided(ctx)
	if err != nil {
		return
	}
	s.Decided = d
	f.mu.Lock()
	f.samples = append(f.samples, s)
	f.mu.Unlock()
}

// Samples returns the counts taken so far.
func (f *Failover) Samples() []FailoverSample {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.samples)
}

// summarize fills the report's counts from the samples.
func (f *Failover) summarize(r *FailoverReport, spare string, restored time.Time) {
	samples := f.Samples()
	r.Samples = len(samples)
	var replaced, zeroFrom, bothFrom time.Time
	for _, s := range samples {
		r.MaxDecided = max(r.MaxDecided, len(s.Decided))
		copies := s.Available[f.App]
		if replaced.IsZero() && slices.Contains(copies, spare) {
			replaced = s.At
		}
		if !replaced.IsZero() {
			switch {
			case len(copies) == 0 && zeroFrom.IsZero():
				zeroFrom = s.At
			case len(copies) > 0 && !zeroFrom.IsZero():
				r.ZeroWindow = max(r.ZeroWindow, s.At.Sub(zeroFrom))
				zeroFrom = time.Time{}
			}
		}
		if s.At.After(restored) {
			switch {
			case len(copies) > 1 && bothFrom.IsZero():
				bothFrom = s.At
			case len(copies) <= 1 && !bothFrom.IsZero():
				r.Overlap += s.At.Sub(bothFrom)
				bothFrom = time.Time{}
			}
		}
	}
	if !zeroFrom.IsZero() {
		r.ZeroWindow = max(r.ZeroWindow, samples[len(samples)-1].At.Sub(zeroFrom))
	}
	if !bothFrom.IsZero() {
		r.Overlap += samples[len(samples)-1].At.Sub(bothFrom)
	}
}

// CutAgent is the Cut of a cluster whose agent reaches the hub through
// proxy: it blocks the proxy and kills the agent's container, so that the
// agent the kubelet restarts cannot reach the hub.
func CutAgent(ctx context.Context, c *framework.Cluster, proxy *framework.Proxy) error {
	proxy.Block()
	pods := &corev1.PodList{}
	if err := c.Client().List(ctx, pods, client.InNamespace(config.AgentNamespace)); err != nil {
		return err
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, config.AgentDeployment+"-") || p.DeletionTimestamp != nil {
			continue
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Running != nil {
				if _, err := c.KillContainer(ctx, p.Namespace, p.Name, s.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
