// Package clitest runs `kubectl ocm` commands in-process for the CLI
// integration tests, with the real root command, and checks their outcome.
package clitest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
)

// Result is the outcome of one command.
type Result struct {
	// Out and ErrOut are what the command wrote to stdout and stderr.
	Out, ErrOut string
	// Err is the error the command returned.
	Err error
}

// CLI runs commands against one kubeconfig context.
type CLI struct {
	// Kubeconfig is the kubeconfig file passed with --kubeconfig.
	Kubeconfig string
	// Context is the context passed with --context; "hub" when empty.
	Context string
}

// Run runs `kubectl ocm ARGS --kubeconfig ... --context ...` with fresh
// buffers as its streams.
func (c CLI) Run(ctx context.Context, args ...string) Result {
	return c.RunWith(ctx, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, args...)
}

// RunWith runs a command with streams whose Out and ErrOut are
// *bytes.Buffer or implement String. For `__complete ARGS` the kubeconfig
// flags come first, so that the word to complete stays last.
func (c CLI) RunWith(ctx context.Context, streams genericiooptions.IOStreams, args ...string) Result {
	kctx := c.Context
	if kctx == "" {
		kctx = "hub"
	}
	flags := []string{"--kubeconfig", c.Kubeconfig, "--context", kctx}
	cmd := root.NewCmdRoot(streams)
	if len(args) > 0 && args[0] == "__complete" {
		cmd.SetArgs(append(append([]string{"__complete"}, flags...), args[1:]...))
	} else {
		cmd.SetArgs(append(args, flags...))
	}
	err := root.Execute(ctx, cmd)
	return Result{Out: text(streams.Out), ErrOut: text(streams.ErrOut), Err: err}
}

// text returns what a stream collected.
func text(w any) string {
	if s, ok := w.(interface{ String() string }); ok {
		return s.String()
	}
	return ""
}

// ExpectOK fails t unless r succeeded and its output holds every want.
func ExpectOK(t testing.TB, r Result, want ...string) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("command failed: %v\nstderr: %s", r.Err, r.ErrOut)
	}
	for _, w := range want {
		if !strings.Contains(r.Out, w) {
			t.Errorf("output lacks %q:\n%s", w, r.Out)
		}
	}
}

// ExpectErr fails t unless r failed with an error holding every want.
func ExpectErr(t testing.TB, r Result, want ...string) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("command succeeded; want an error containing %q\nstdout: %s", want, r.Out)
	}
	for _, w := range want {
		if !strings.Contains(r.Err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, r.Err)
		}
	}
}
