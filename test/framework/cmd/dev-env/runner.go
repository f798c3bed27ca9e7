package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// runnerBinaries are the binaries under --bin-dir that the component runner
// runs, each for the images of its name: the product's ocm-controller, the
// agent of the example add-ons (examples/addons/helloworld) and the manager
// of examples/addons/hellomanager.
var runnerBinaries = []string{"ocm-controller", "helloworld-addon", "hellomanager"}

// startRunner starts the component runner for the environment's clusters, so
// that the ocm-controller Deployments that `kubectl ocm hub init` and `join`
// create, and the example add-on's agent the hub deploys, run as local
// processes. It returns a function that stops it.
func (o *options) startRunner(ctx context.Context, env *framework.Environment, out io.Writer) (func(), error) {
	binaries := make(map[string]string, len(runnerBinaries))
	for _, name := range runnerBinaries {
		binary, err := filepath.Abs(filepath.Join(o.binDir, name))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(binary); err != nil {
			return nil, fmt.Errorf("%s not found at %s: run 'make build' first", name, binary)
		}
		binaries[name] = binary
	}
	r := framework.NewRunner(framework.RunnerOptions{
		Clusters: env.Clusters(),
		Binaries: binaries,
		Dir:      o.path("components"),
		Log:      out,
	})
	if err := r.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the component runner: %w", err)
	}
	return func() {
		if err := r.Stop(); err != nil {
			fmt.Fprintf(out, "stop the component runner: %v\n", err)
		}
	}, nil
}
