package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// startRunner starts the component runner for the environment's clusters, so
// that the ocm-controller Deployments that `kubectl ocm hub init` and `join`
// create run as local processes. It returns a function that stops it.
func (o *options) startRunner(ctx context.Context, env *framework.Environment, out io.Writer) (func(), error) {
	binary, err := filepath.Abs(filepath.Join(o.binDir, "ocm-controller"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("ocm-controller not found at %s: run 'make build' first", binary)
	}
	r := framework.NewRunner(framework.RunnerOptions{
		Clusters: env.Clusters(),
		Binaries: map[string]string{"ocm-controller": binary},
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
