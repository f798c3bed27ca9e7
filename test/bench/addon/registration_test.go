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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonregistration "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// BenchmarkAddonRegistration enables -addons copies of the example add-on
// (helloworld-1…N, each with its own AddOnTemplate, agent Deployment and
// hub registration) on -clusters clusters with one `kubectl ocm addon
// enable`, and times every add-on × cluster from the command's start
// through the stages of its hub registration until Available: with the csr
// driver, registrations written → CSR created → approved → certificate
// issued → <addon>-hub-kubeconfig Secret on the managed cluster →
// Available; with the token driver, registrations written →
// TokenInfrastructureReady → Secret → Available. The two real clusters run
// the real add-on registration agent with -driver and one helloworld-addon
// process per add-on; with the csr driver the simulated agents file their
// add-ons' requests too (they have no cluster to write a Secret to).
func BenchmarkAddonRegistration(b *testing.B) {
	driver := *registrationDriver
	if driver != addonv1alpha1.KubeClientDriverCSR && driver != addonv1alpha1.KubeClientDriverToken {
		b.Fatalf("-driver %q: use %s or %s", driver, addonv1alpha1.KubeClientDriverCSR, addonv1alpha1.KubeClientDriverToken)
	}
	if *addonCount < 1 {
		b.Fatalf("-addons %d: need at least 1", *addonCount)
	}
	csrDriver := driver == addonv1alpha1.KubeClientDriverCSR
	af := newAddonFleet(b, fleetOptions{driver: driver, simRegistrations: csrDriver})
	ctx := b.Context()
	names := af.registerCopies(ctx, b, *addonCount)
	loadBefore := loadAverage()

	stages := []stage{stageCreated, stageRegistered, stageTokenReady, stageSecret, stageAvailable}
	if csrDriver {
		stages = []stage{stageCreated, stageRegistered, stageCSR, stageApproved, stageIssued, stageSecret, stageAvailable}
	}
	real := map[string]bool{}
	for _, c := range realClusters {
		real[c] = true
	}
	// want lists the stages a pair goes through: the simulated clusters
	// have no Secret, and with the token driver no registration agent.
	want := func(p pair) []stage {
		if real[p.cluster] {
			return stages
		}
		if csrDriver {
			return stages[: len(stages)-2 : len(stages)-2]
		}
		return []stage{stageCreated, stageRegistered}
	}
	var pairs []pair
	for _, c := range af.clusters {
		for _, n := range names {
			pairs = append(pairs, pair{cluster: c, addon: n})
		}
	}
	wantAll := func(p pair) []stage { return append(want(p), stageAvailable) }

	st := &stageTimes{}
	watchCtx, stop := context.WithCancel(ctx)
	var watches sync.WaitGroup
	defer watches.Wait()
	defer stop()
	af.watchStages(watchCtx, b, &watches, st)
	start := time.Now()
	af.enable(ctx, b, names...)
	cli := time.Since(start)
	last, err := benchkit.PollErr(ctx, benchkit.SlowPoll, waitTimeout, "every add-on registered and Available", func(context.Context) (bool, error) {
		return len(st.missing(pairs, wantAll)) == 0, nil
	})
	if err != nil {
		missing := st.missing(pairs, wantAll)
		b.Fatalf("%v: %d of %d add-on × cluster pairs not there yet, first %s; hub controller log: %s; agent log: %s", err, len(missing), len(pairs),
			missing[0], af.Runner.LogPath("hub", config.HubNamespace, benchkit.HubController), af.Runner.LogPath(realClusters[0], config.AgentNamespace, benchkit.AgentDeployment))
	}
	stop()

	sims := "simulated agents file each add-on's CSR with their own certificates (backoff 0.25–5 s, as the real agent) and acknowledge its work; no Secret"
	if !csrDriver {
		sims = "simulated agents acknowledge each add-on's work and serve no registration (no managed cluster to hold a token)"
	}
	benchkit.Record(b, "setup", fmt.Sprintf("driver %s, %d add-ons × %d clusters = %d", driver, len(names), len(af.clusters), len(pairs)),
		fmt.Sprintf("%d real clusters (real agent, %d helloworld-addon processes each), %d simulated: %s; load average %s before, %s after",
			len(realClusters), len(names), len(af.clusters)-len(realClusters), sims, loadBefore, loadAverage()))
	benchkit.Record(b, fmt.Sprintf("enable %d add-ons on %d clusters → every stage of every pair reached", len(names), len(af.clusters)),
		benchkit.Seconds(last.Sub(start)), fmt.Sprintf("the enable command itself %s", benchkit.Seconds(cli)))
	fromEnable := func(pair) time.Time { return start }
	for i, s := range stages {
		var served []pair
		for _, p := range pairs {
			if s == stageAvailable || containsStage(want(p), s) {
				served = append(served, p)
			}
		}
		xs := st.since(served, s, fromEnable)
		ctxt := fmt.Sprintf("%d pairs", len(xs))
		if i > 0 {
			prev := stages[i-1]
			steps := st.since(served, s, func(p pair) time.Time { return st.get(p, prev) })
			ctxt += fmt.Sprintf("; after %s: p50 %.2f / max %.2f s", prev, benchkit.Quantile(steps, 0.5), benchkit.Quantile(steps, 1))
		}
		benchkit.Record(b, "enable → "+s.String(), quantiles(xs), ctxt)
	}
	var realPairs []pair
	for _, p := range pairs {
		if real[p.cluster] {
			realPairs = append(realPairs, p)
		}
	}
	benchkit.Record(b, "real clusters: enable → Available", quantiles(st.since(realPairs, stageAvailable, fromEnable)),
		"agent Deployment started by the component runner once its Secret exists; Available from its feedback")
	b.ReportMetric(last.Sub(start).Seconds(), "all-s")
	b.ReportMetric(benchkit.Quantile(st.since(pairs, stageAvailable, fromEnable), 0.5), "available-p50-s")
	b.ReportMetric(0, "ns/op")
}

// containsStage reports whether ss holds s.
func containsStage(ss []stage, s stage) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// registerCopies applies the example's hub ClusterRole and n copies of its
// ClusterManagementAddOn and AddOnTemplate as the hub admin, and returns
// the copies' names.
func (af *addonFleet) registerCopies(ctx context.Context, b *testing.B, n int) []string {
	b.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	read := func(file string) string {
		data, err := os.ReadFile(filepath.Join(root, "examples", "addons", addonName, file))
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	role, err := config.DecodeDocuments([]byte(read("hub-clusterrole.yaml")))
	if err != nil {
		b.Fatal(err)
	}
	objs := role
	example := read("addontemplate.yaml") + "\n---\n" + read("clustermanagementaddon.yaml")
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", addonName, i+1)
		copies, err := exampleCopy(example, name)
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, copies...)
		names = append(names, name)
	}
	if err := apply.Apply(ctx, af.HubClient, objs, apply.Options{}); err != nil {
		b.Fatalf("apply %d copies of the %s add-on: %v", n, addonName, err)
	}
	return names
}

// exampleCopy returns the example add-on's AddOnTemplate and
// ClusterManagementAddOn (the YAML documents of example) as add-on name:
// the template <name>-0.1.0 for add-on name, whose agent objects are named
// <name>-agent (its Deployment selecting app.kubernetes.io/name
// <name>-addon) and mount Secret <name>-hub-kubeconfig, and the
// ClusterManagementAddOn name defaulting to it. The agent's image and the
// hub ClusterRole its registration binds stay the example's.
func exampleCopy(example, name string) ([]*unstructured.Unstructured, error) {
	text := strings.NewReplacer(
		agentDeployment, name+"-agent",
		addonName+addonregistration.SecretSuffix, name+addonregistration.SecretSuffix,
		addonName+"-0.1.0", name+"-0.1.0",
		"name: "+agentImage, "name: "+name+"-addon",
	).Replace(example)
	objs, err := config.DecodeDocuments([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("decode the %s add-on: %w", addonName, err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "AddOnTemplate":
			err = unstructured.SetNestedField(o.Object, name, "spec", "addonName")
		case "ClusterManagementAddOn":
			o.SetName(name)
			err = unstructured.SetNestedField(o.Object, name, "spec", "addOnMeta", "displayName")
		}
		if err != nil {
			return nil, fmt.Errorf("rename the %s add-on's %s: %w", addonName, o.GetKind(), err)
		}
	}
	return objs, nil
}

// loadAverage returns the 1-minute load average of the machine, "?" when
// it cannot be read.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	first, _, _ := strings.Cut(string(data), " ")
	return first
}
