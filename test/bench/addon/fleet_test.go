package addon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	// addonName is the example add-on (examples/addons/helloworld).
	addonName = "helloworld"
	// agentImage is the image name of its agent, which the component runner
	// maps to the helloworld-addon binary built from this tree.
	agentImage = "helloworld-addon"
	// agentDeployment is the add-on agent's Deployment on a managed cluster.
	agentDeployment = "helloworld-agent"
	// waitTimeout bounds every wait for the whole fleet.
	waitTimeout = 10 * time.Minute
)

// realClusters are the managed clusters joined by real agents.
var realClusters = []string{"cluster1", "cluster2"}

// addonFleet is a hub with realClusters joined by their real agents, the
// other clusters registered by simulated agents that also act as their
// work agents, and the example add-on registered on the hub (not enabled).
type addonFleet struct {
	*benchkit.Fleet
	// clusters are every managed cluster, the real ones first.
	clusters []string
	// hubW is an admin client of the hub that can watch.
	hubW client.WithWatch
}

// fleetOptions are what a benchmark changes of the fleet.
type fleetOptions struct {
	// driver is the add-on kube client driver of the real agents (csr or
	// token); empty leaves the agent's default, csr.
	driver string
	// simRegistrations makes the simulated agents file their add-ons'
	// certificate requests (benchkit.SimHub.ServeAddonRegistrations).
	simRegistrations bool
}

// startAddonFleet starts the fleet of -clusters managed clusters and
// registers the example add-on on the hub as its README says.
func startAddonFleet(b *testing.B) *addonFleet {
	b.Helper()
	af := newAddonFleet(b, fleetOptions{})
	af.registerExample(b.Context(), b)
	return af
}

// newAddonFleet starts the fleet of -clusters managed clusters, the real
// ones joined by their agents with opts, no add-on registered.
func newAddonFleet(b *testing.B, opts fleetOptions) *addonFleet {
	b.Helper()
	if *clusterCount < len(realClusters) {
		b.Fatalf("-clusters %d: need at least %d (the real clusters)", *clusterCount, len(realClusters))
	}
	agent := benchkit.Binary(b, agentImage, "./examples/addons/helloworld/agent")
	f := benchkit.StartFleetWithBinaries(b, config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}},
		map[string]string{agentImage: agent}, realClusters...)
	ctx := b.Context()
	af := &addonFleet{Fleet: f, clusters: append([]string(nil), realClusters...)}
	var err error
	if af.hubW, err = client.NewWithWatch(f.Hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: f.HubClient.RESTMapper()}); err != nil {
		b.Fatal(err)
	}
	for _, c := range realClusters {
		t := benchkit.JoinCluster(ctx, b, f, c, func(v *config.AgentValues) { v.AddonKubeClientRegistrationAuth = opts.driver })
		b.Logf("joined %s: %s", c, t)
	}
	simulated := make([]string, *clusterCount-len(realClusters))
	for i := range simulated {
		simulated[i] = fmt.Sprintf("sim-%03d", i+1)
	}
	h := benchkit.NewSimHub(b, f)
	h.ServeWorks = true
	h.ServeAddonRegistrations = opts.simRegistrations
	start := time.Now()
	benchkit.StartSimAgents(ctx, b, h, simulated)
	b.Logf("%d simulated clusters registered, accepted and Available in %s", len(simulated), time.Since(start).Round(time.Millisecond))
	af.clusters = append(af.clusters, simulated...)
	return af
}

// registerExample applies the example add-on's hub objects (hub ClusterRole,
// AddOnTemplate, ClusterManagementAddOn) as the hub admin.
func (af *addonFleet) registerExample(ctx context.Context, b *testing.B) {
	b.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	for _, file := range []string{"hub-clusterrole.yaml", "addontemplate.yaml", "clustermanagementaddon.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", "addons", addonName, file))
		if err != nil {
			b.Fatal(err)
		}
		objs, err := config.DecodeDocuments(data)
		if err != nil {
			b.Fatalf("%s: %v", file, err)
		}
		if err := apply.Apply(ctx, af.HubClient, objs, apply.Options{}); err != nil {
			b.Fatalf("apply examples/addons/%s/%s: %v", addonName, file, err)
		}
	}
}

// enable runs `kubectl ocm addon enable --names <names> --clusters ...` on
// every cluster, in process through the plugin's root command, without
// --wait (the benchmark watches for itself).
func (af *addonFleet) enable(ctx context.Context, b *testing.B, names ...string) {
	b.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := root.NewCmdRoot(streams)
	args := []string{"addon", "enable", "--names", strings.Join(names, ","), "--clusters", strings.Join(af.clusters, ","),
		"--kubeconfig", af.Env.Kubeconfig(), "--context", "hub"}
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		b.Fatalf("kubectl ocm %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	b.Logf("$ kubectl ocm addon enable --names <%d add-ons> --clusters <%d clusters> --context hub\n%s\n… %d lines in all",
		len(names), len(af.clusters), first, strings.Count(out.String(), "\n"))
}

// enableAll enables the add-on on every cluster (enable) and waits until
// every ManagedClusterAddOn is Available. It returns when the command
// started, how long it ran, and what the watch saw.
func (af *addonFleet) enableAll(ctx context.Context, b *testing.B) (start time.Time, cli time.Duration, t addonTimes) {
	b.Helper()
	res := af.watchAddons(ctx, b, available)
	start = time.Now()
	af.enable(ctx, b, addonName)
	cli = time.Since(start)
	t = af.wait(ctx, b, fmt.Sprintf("the %s add-on Available on %d clusters", addonName, len(af.clusters)), res)
	return start, cli, t
}

// addonTimes is what a watch of the add-on's ManagedClusterAddOns saw, per
// cluster: when each first arrived, and when each first met the condition.
type addonTimes struct {
	seen, met map[string]time.Time
	err       error
}

// latencies returns, for every cluster, met − since and met − seen (its
// own ManagedClusterAddOn's first arrival, or since when it was there
// before), in seconds, and the last met time.
func (t addonTimes) latencies(since time.Time) (fromStart, fromSeen []float64, last time.Time) {
	for c, m := range t.met {
		fromStart = append(fromStart, m.Sub(since).Seconds())
		fromSeen = append(fromSeen, m.Sub(later(t.seen[c], since)).Seconds())
		if m.After(last) {
			last = m
		}
	}
	return fromStart, fromSeen, last
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// watchAddons watches the add-on's ManagedClusterAddOns on the hub until
// every cluster's has met cond (or waitTimeout), recording the times of
// arrival. It returns once the watch has synced; the result arrives on the
// channel. Objects present at the sync count as arriving then.
func (af *addonFleet) watchAddons(ctx context.Context, b *testing.B, cond func(*addonv1alpha1.ManagedClusterAddOn) bool) <-chan addonTimes {
	b.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	selector := fields.OneTermEqualSelector("metadata.name", addonName).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			l := &addonv1alpha1.ManagedClusterAddOnList{}
			return l, af.hubW.List(ctx, l, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return af.hubW.Watch(ctx, &addonv1alpha1.ManagedClusterAddOnList{}, &client.ListOptions{Raw: &opts})
		},
	}
	want := map[string]bool{}
	for _, c := range af.clusters {
		want[c] = true
	}
	t := addonTimes{seen: map[string]time.Time{}, met: map[string]time.Time{}}
	observe := func(at time.Time, mca *addonv1alpha1.ManagedClusterAddOn) bool {
		if !want[mca.Namespace] {
			return false
		}
		if _, ok := t.seen[mca.Namespace]; !ok {
			t.seen[mca.Namespace] = at
		}
		if _, ok := t.met[mca.Namespace]; !ok && cond(mca) {
			t.met[mca.Namespace] = at
		}
		return len(t.met) == len(want)
	}
	var once sync.Once
	synced := make(chan struct{})
	out := make(chan addonTimes, 1)
	go func() {
		defer cancel()
		defer once.Do(func() { close(synced) })
		_, t.err = watchtools.UntilWithSync(ctx, lw, &addonv1alpha1.ManagedClusterAddOn{}, func(store cache.Store) (bool, error) {
			defer once.Do(func() { close(synced) })
			now, done := time.Now(), false
			for _, o := range store.List() {
				done = observe(now, o.(*addonv1alpha1.ManagedClusterAddOn))
			}
			return done, nil
		}, func(ev watch.Event) (bool, error) {
			mca, ok := ev.Object.(*addonv1alpha1.ManagedClusterAddOn)
			if !ok || ev.Type == watch.Deleted {
				return false, nil
			}
			return observe(time.Now(), mca), nil
		})
		if t.err != nil {
			t.err = fmt.Errorf("%d of %d ManagedClusterAddOns met the condition: %w", len(t.met), len(want), t.err)
		}
		out <- t
	}()
	<-synced
	return out
}

// wait returns the result of watchAddons, failing b naming the clusters
// whose ManagedClusterAddOn did not meet the condition and the state of the
// first of them.
func (af *addonFleet) wait(ctx context.Context, b *testing.B, what string, res <-chan addonTimes) addonTimes {
	b.Helper()
	t := <-res
	if t.err == nil {
		return t
	}
	var missing []string
	for _, c := range af.clusters {
		if _, ok := t.met[c]; !ok {
			missing = append(missing, c)
		}
	}
	state := ""
	if len(missing) > 0 {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := af.HubClient.Get(ctx, client.ObjectKey{Namespace: missing[0], Name: addonName}, mca); err == nil {
			state = fmt.Sprintf("; %s: conditions %+v, configReferences %+v", missing[0], mca.Status.Conditions, mca.Status.ConfigReferences)
		}
	}
	b.Fatalf("waiting for %s: %v; not yet: %v%s; hub controller log: %s", what, t.err, missing, state,
		af.Runner.LogPath("hub", config.HubNamespace, benchkit.HubController))
	return t
}

// available reports whether mca is Available.
func available(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
}

// quantiles formats p50, p90, p99 and max of xs (seconds).
func quantiles(xs []float64) string {
	return fmt.Sprintf("p50 %.2f / p90 %.2f / p99 %.2f / max %.2f s",
		benchkit.Quantile(xs, 0.5), benchkit.Quantile(xs, 0.9), benchkit.Quantile(xs, 0.99), benchkit.Quantile(xs, 1))
}
