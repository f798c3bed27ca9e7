package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/hack/testreport/turnwait"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// shared is the fleet the tests that leave it as they found it share: hub,
// cluster1 and cluster2, each with a node, brought together once by the
// getting-started flow (sharedFleet). cluster2 runs the previous Kubernetes
// release, the others the current one: a fleet of mixed releases, as fleets
// are. TestMain stops it.
var shared struct {
	mu  sync.Mutex
	f   *fleet
	err error
	// hubInit and getClusters are what `hub init` and `get clusters`
	// printed during the flow, for TestRegistration to check.
	hubInit, getClusters string
	// tokens are the bootstrap tokens each cluster joined with: cluster1
	// the one hub init printed, cluster2 one the hub lets register cluster2
	// only.
	tokens    map[string]string
	apiserver string
	// pins are the --ca-cert-hash flags of hub init's join command.
	pins []string
}

// sharedFleet returns the shared fleet, starting it on first use with the
// getting-started flow: `hub init --wait`, the seed ManagedCluster created
// ahead of its agent, cluster1 joined with hub init's token and cluster2
// with a token of its own, both accepted with `accept --wait` and seen
// Joined and Available. A test that changes the fleet puts it back before
// it ends. A failure of the flow fails every test that asks for the fleet.
func sharedFleet(t *testing.T) *fleet {
	t.Helper()
	framework.SkipIfShort(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.f == nil && shared.err == nil {
		startShared(t)
	}
	if shared.err != nil {
		t.Fatalf("the shared fleet: %v", shared.err)
	}
	return shared.f
}

// startShared starts the shared fleet and runs the getting-started flow on
// it, logging to t; what fails is kept in shared.err, also when a check of
// the flow ends t.
func startShared(t *testing.T) {
	done := false
	defer func() {
		if !done && shared.err == nil {
			shared.err = fmt.Errorf("the getting-started flow failed in %s: see its log", t.Name())
		}
	}()
	if shared.err = runShared(t); shared.err == nil {
		done = true
	}
}

// runShared is startShared's work.
func runShared(t *testing.T) error {
	dir := filepath.Join(os.Getenv(framework.KeepDirEnv), "shared")
	if os.Getenv(framework.KeepDirEnv) == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ocm-e2e-shared-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(dir, "framework.log"))
	if err != nil {
		return err
	}
	if err := previousBuilt(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := framework.Start(ctx, framework.Options{
		Clusters: []string{"hub", "cluster1", "cluster2"}, Dir: dir, Log: log,
		Nodes: true, Images: bins.images, Previous: []string{"cluster2"},
	})
	if err != nil {
		return fmt.Errorf("start hub, cluster1 and cluster2 (log %s): %w", log.Name(), err)
	}
	f := &fleet{env: env}
	shared.f = f
	shared.hubInit = f.hubInit(t)
	shared.tokens = map[string]string{}
	shared.tokens["cluster1"], shared.apiserver = joinArgs(t, shared.hubInit)
	shared.pins = pinFlags(t, shared.hubInit)
	applySeed(t, env.Cluster("hub").Client(), "004-managedcluster.yaml")
	shared.tokens["cluster2"], _ = joinArgs(t, f.ocm(t, "hub", "token", "--cluster-name", "cluster2", "--context", "hub"))
	for _, c := range []string{"cluster1", "cluster2"} {
		f.ocm(t, append([]string{"join", "--hub-token", shared.tokens[c], "--hub-apiserver", shared.apiserver, "--cluster-name", c, "--context", c}, shared.pins...)...)
	}
	f.ocm(t, "accept", "--clusters", "cluster1,cluster2", "--context", "hub", "--wait")
	for _, c := range []string{"cluster1", "cluster2"} {
		waitJoinedAvailable(t, env.Cluster("hub").Client(), c)
	}
	shared.getClusters = f.ocm(t, "get", "clusters", "--context", "hub")
	return nil
}

// parallel marks t, a test with a fleet of its own, to run beside the other
// such tests: the go command starts them once every test that shares the
// fleet (sharedFleet, which none of them uses) has ended, so the shared
// fleet is stopped first, leaving the machine to them. Environments side by
// side take host slots of their own (test/framework/internal/host). They
// start in the order they are declared, at most -test.parallel at once and
// more while the machine's CPU is idle enough (fleets).
func parallel(t *testing.T) {
	t.Helper()
	framework.SkipIfShort(t)
	turn := fleets.register()
	t.Parallel()
	waiting := time.Now()
	extra := fleets.enter(turn)
	t.Cleanup(fleets.leave)
	t.Log(turnwait.Line(time.Since(waiting)))
	if extra != nil {
		t.Logf("started beside %d fleets, beyond -test.parallel: the machine's CPU was %.0f%% idle over the last %s", extra.beside, 100*extra.idle, idleWindow)
	}
	if err := stopShared(); err != nil {
		t.Logf("stop the shared fleet: %v", err)
	}
}

// useFleetLimit makes the go command's -test.parallel fleets' capacity and
// lifts the go command's own limit, which would otherwise pick the tests
// fleets admits among those it released, in its own order. Every test of
// the package that runs in parallel goes through parallel. Until ctx ends,
// fleets watches the machine's CPU to admit more while it is idle.
func useFleetLimit(ctx context.Context) error {
	f := flag.Lookup("test.parallel")
	if f == nil {
		return errors.New("no -test.parallel flag")
	}
	n, err := strconv.Atoi(f.Value.String())
	if err != nil {
		return fmt.Errorf("-test.parallel %q: %w", f.Value.String(), err)
	}
	fleets.capacity = max(1, n)
	if err := fleets.watchCPU(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "fleets: at most -test.parallel=%d at once whatever the machine's load: %v\n", n, err)
	}
	return f.Value.Set(strconv.Itoa(math.MaxInt32))
}

// stopShared stops the shared fleet, if it was started.
func stopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.f == nil {
		return nil
	}
	err := shared.f.env.Stop()
	if os.Getenv(framework.KeepDirEnv) == "" {
		err = errors.Join(err, os.RemoveAll(shared.f.env.Dir()))
	}
	shared.f, shared.err = nil, errors.New("stopped: the tests that share the fleet have ended")
	return err
}
