package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// hubNamespace is the namespace of the hub controller's Deployment, which
// the runner runs as one process.
const hubNamespace = "open-cluster-management-hub"

// shortLeaseArgs are the leader election timings the hub fault tests give the
// hub controller, so that a takeover waits seconds rather than the 15s
// lease of hubLeaseArgs (the wrapper appends them, after the Deployment's
// flags, so they win). The renew deadline leaves the leader room on a loaded machine.
var shortLeaseArgs = []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s"}

// startFleetWithHubArgs is startRunnerFleet whose hub controller
// (`ocm-controller hub`) runs with hubArgs appended: the runner runs a
// wrapper script that adds them, so restarted processes and
// ProcessInfo.Binary carry them too. The hub's Deployment is the operator's,
// which takes no such arguments: the runner is what lets these tests shorten
// the leader election.
func startFleetWithHubArgs(t *testing.T, hubArgs []string, clusters ...string) *fleet {
	t.Helper()
	framework.SkipIfShort(t)
	wrapper := filepath.Join(t.TempDir(), "ocm-controller")
	quoted := make([]string, len(hubArgs))
	for i, a := range hubArgs {
		quoted[i] = "'" + a + "'"
	}
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = hub ]; then exec '%s' \"$@\" %s; fi\nexec '%s' \"$@\"\n",
		bins.ocmController, strings.Join(quoted, " "), bins.ocmController)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	env := framework.StartForTest(t, clusters...)
	componentRunner := runner.StartForTest(t, map[string]string{
		"ocm-controller":   wrapper,
		"helloworld-addon": bins.helloworldAddon,
	}, env.Clusters()...)
	return &fleet{env: env, runner: componentRunner}
}

// hubControllerPID returns the PID of the hub controller process, 0 when none runs.
func (f *fleet) hubControllerPID() int {
	info, _ := f.runner.Process("hub", hubNamespace, hubController)
	return info.Pid
}

// simulateClusters creates, for each name, a cluster namespace and a
// ManagedCluster in the default ManagedClusterSet with labels. No agent
// runs for them: ackWork plays the agent's part for their ManifestWorks.
func simulateClusters(t *testing.T, hub client.Client, labels map[string]string, names ...string) {
	t.Helper()
	for _, name := range names {
		l := map[string]string{clusterv1beta2.ClusterSetLabel: "default"}
		for k, v := range labels {
			l[k] = v
		}
		require.NoError(t, hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
		require.NoError(t, hub.Create(t.Context(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}))
	}
}

// ackWork reports the ManifestWork mw Applied and Available at its
// generation, as a work agent would once every manifest is applied; mw holds
// the written object afterwards.
func ackWork(ctx context.Context, hub client.Client, mw *workv1.ManifestWork) error {
	for _, c := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		meta.SetStatusCondition(&mw.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue,
			Reason: "Acknowledged", Message: "acknowledged by the test", ObservedGeneration: mw.Generation})
	}
	if err := hub.Status().Update(ctx, mw); err != nil {
		return fmt.Errorf("acknowledge ManifestWork %s/%s: %w", mw.Namespace, mw.Name, err)
	}
	return nil
}

// decisionLog watches the PlacementDecisions of one namespace and records,
// per decision, every change of its set of clusters.
type decisionLog struct {
	mu      sync.Mutex
	current map[string][]string // decision name → sorted clusters
	changes int
	removed []string // "decision: cluster" for every cluster a change dropped
	last    time.Time
}

// watchDecisions starts a decisionLog for namespace ns on the hub; it stops
// when t ends. The watch starts from the current state, so the log only
// counts changes made after the call.
func watchDecisions(t *testing.T, hub *framework.Cluster, ns string) *decisionLog {
	t.Helper()
	c, err := client.NewWithWatch(hub.RESTConfig(), client.Options{Scheme: apis.Scheme})
	require.NoError(t, err)
	list := &clusterv1beta1.PlacementDecisionList{}
	require.NoError(t, c.List(t.Context(), list, client.InNamespace(ns)))
	l := &decisionLog{current: map[string][]string{}}
	for _, d := range list.Items {
		l.current[d.Name] = decisionClusters(&d)
	}
	w, err := c.Watch(t.Context(), &clusterv1beta1.PlacementDecisionList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*clusterv1beta1.PlacementDecision)
			if !ok {
				continue
			}
			var now []string
			if ev.Type != watch.Deleted {
				now = decisionClusters(d)
			}
			l.record(d.Name, now)
		}
	}()
	return l
}

// record notes the clusters of decision name after an event.
func (l *decisionLog) record(name string, now []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := l.current[name]
	if slices.Equal(before, now) {
		return
	}
	l.changes++
	l.last = time.Now()
	for _, c := range before {
		if !slices.Contains(now, c) {
			l.removed = append(l.removed, name+": "+c)
		}
	}
	l.current[name] = now
}

// snapshot returns the number of changes, the clusters every change
// dropped, and the union of the current decisions, sorted.
func (l *decisionLog) snapshot() (changes int, removed, clusters []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cs := range l.current {
		clusters = append(clusters, cs...)
	}
	slices.Sort(clusters)
	return l.changes, append([]string(nil), l.removed...), clusters
}

// decisionClusters returns the sorted cluster names of one PlacementDecision.
func decisionClusters(d *clusterv1beta1.PlacementDecision) []string {
	var out []string
	for _, c := range d.Status.Decisions {
		out = append(out, c.ClusterName)
	}
	slices.Sort(out)
	return out
}

// metricSum scrapes the Prometheus text at url and sums the samples of
// metric whose labels include every pair of match (nil matches all).
func metricSum(ctx context.Context, url, metric string, match map[string]string) (float64, error) {
	m, err := framework.ScrapeMetrics(ctx, http.DefaultClient, url)
	if err != nil {
		return 0, err
	}
	return m.Sum(metric, match), nil
}
