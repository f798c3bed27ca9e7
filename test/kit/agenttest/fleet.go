package agenttest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestImage is the agent image join installs in the tests; the component
// runner runs ocm-controller built from the tree whatever the image.
const TestImage = "example.com/ocm-controller:test"

// Fleet is the setting of the registration tests: a hub "hub" with what
// `hub init` installs and managed clusters, all running the shipped
// ocm-controller through the component runner, that join the hub with
// `kubectl ocm join` as users do.
type Fleet struct {
	// Env holds the clusters.
	Env *framework.Environment
	// Runner runs the Deployments of every cluster; nil with NoRunner.
	Runner *runner.Runner
	// Hub is the cluster "hub".
	Hub *framework.Cluster
	// Token is a bootstrap token of Hub, valid for an hour, for join's
	// --hub-token.
	Token string
	// CA is the CA bundle of Hub when the fleet started, and CAFile a file
	// holding it, for join's --ca-file.
	CA     []byte
	CAFile string
}

// FleetOptions says how to start a Fleet.
type FleetOptions struct {
	// Options are the settings of the clusters; Clusters names those
	// started after "hub", which may include further hubs.
	framework.Options
	// BeforeRunner, when set, runs once the clusters are up and before the
	// component runner starts on them, for a change the runner and the
	// components must find from their start.
	BeforeRunner func(ctx context.Context, env *framework.Environment) error
	// NoRunner starts no component runner, for the tests of what join
	// checks before it installs anything.
	NoRunner bool
	// Hub are the values of what StartFleet installs on the hub
	// (RunnerHub), such as the cluster importer.
	Hub config.HubValues
	// RunnerArgs are the component runner's Options.ExtraArgs.
	RunnerArgs map[string][]string
}

// StartFleet starts, unless the tests run with -short, the hub "hub" and
// the clusters of opts, runs the component runner on all of them with
// ocm-controller built from the tree, installs on the hub what `hub init`
// installs (hubtest.Install with RunnerHub), and returns the fleet and a
// context that ends after timeout or with t.
func StartFleet(t *testing.T, timeout time.Duration, opts FleetOptions) (context.Context, *Fleet) {
	t.Helper()
	framework.SkipIfShort(t)
	var bin string
	if !opts.NoRunner {
		bin = framework.BuildForTest(t, "./controllers/cmd/ocm-controller", config.ControllerImageName)
	}
	envOpts := opts.Options
	envOpts.Clusters = append([]string{"hub"}, envOpts.Clusters...)
	f := &Fleet{Env: framework.StartForTestWith(t, envOpts)}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	f.Hub = f.Env.Cluster("hub")
	f.CA = f.Hub.CAData()
	f.CAFile = filepath.Join(t.TempDir(), "hub-ca.crt")
	if err := os.WriteFile(f.CAFile, f.CA, 0o600); err != nil {
		t.Fatal(err)
	}
	if opts.BeforeRunner != nil {
		if err := opts.BeforeRunner(ctx, f.Env); err != nil {
			t.Fatal(err)
		}
	}
	if !opts.NoRunner {
		f.Runner = runner.StartForTestWith(t, runner.Options{
			Binaries: map[string]string{config.ControllerImageName: bin}, Clusters: f.Env.Clusters(), ExtraArgs: opts.RunnerArgs,
		})
	}
	hubtest.Install(ctx, t, f.Hub.Client(), RunnerHub(opts.Hub))
	f.Token = hubtest.BootstrapToken(ctx, t, f.Hub)
	return ctx, f
}

// RunnerHub are the options of hubtest.Install for a hub whose hub
// controller the component runner runs, as `hub init` installs it with
// values v: the hub objects alone, the runner's hub controller serving the
// conversion webhook.
func RunnerHub(v config.HubValues) hubtest.InstallOptions {
	return hubtest.InstallOptions{Values: v, NoClusterManager: true, NoConversionWebhook: true, FieldManager: "agenttest"}
}

// Flags selects context of the fleet's kubeconfig, as --kubeconfig and
// --context do.
func (f *Fleet) Flags(context string) *genericclioptions.ConfigFlags {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Context = ptr.To(f.Env.Kubeconfig()), ptr.To(context)
	return flags
}

// Join runs `kubectl ocm join --wait` on the managed cluster named cluster,
// as its admin: to the hub with the fleet's bootstrap token, trusting
// CAFile, with the agent image TestImage and a 2-minute wait, each changed
// by the edits (a registration driver, CA pins, ...). It returns once the
// hub has the cluster's registration, and fails t when join fails.
func (f *Fleet) Join(ctx context.Context, t testing.TB, cluster string, edits ...func(*join.Options)) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := join.NewOptions(f.Flags(cluster), streams)
	o.HubAPIServer, o.HubToken, o.ClusterName, o.CAFile = f.Hub.Server(), f.Token, cluster, f.CAFile
	o.Image, o.Wait, o.Timeout = TestImage, true, 2*time.Minute
	for _, edit := range edits {
		edit(o)
	}
	if err := RunJoin(ctx, o); err != nil {
		t.Fatalf("join %s: %v\noutput:\n%s", cluster, err, bytes.Join([][]byte{out.Bytes(), errOut.Bytes()}, nil))
	}
}

// RunJoin completes, validates and runs o, as the command does.
func RunJoin(ctx context.Context, o *join.Options) error {
	if err := o.Complete(nil, nil); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// Accept runs `kubectl ocm accept --wait` on the hub for clusters, as the
// hub's admin, with a 2-minute wait, failing t when it fails.
func (f *Fleet) Accept(ctx context.Context, t testing.TB, clusters ...string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	a := accept.NewOptions(f.Flags("hub"), streams)
	a.Clusters, a.Wait, a.Timeout = clusters, true, 2*time.Minute
	err := a.Complete(nil, nil)
	if err == nil {
		err = a.Validate()
	}
	if err == nil {
		err = a.Run(ctx)
	}
	if err != nil {
		t.Fatalf("accept %v: %v\noutput:\n%s", clusters, err, bytes.Join([][]byte{out.Bytes(), errOut.Bytes()}, nil))
	}
}
