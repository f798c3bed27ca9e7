package scale

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// hubArgs runs the ocm-controller through a wrapper that adds the flags of
// a file to the hub mode's, so that the harness can restart the hub
// controller with other flags (the baseline's) on the same fleet.
type hubArgs struct {
	// wrapper is the executable the component runner runs as the
	// ocm-controller image.
	wrapper string
	file    string
}

// newHubArgs builds the ocm-controller and writes its wrapper, with no
// extra flags.
func newHubArgs(b *testing.B) *hubArgs {
	b.Helper()
	bin := benchkit.Binary(b, "ocm-controller", "./controllers/cmd/ocm-controller")
	dir := b.TempDir()
	a := &hubArgs{wrapper: filepath.Join(dir, "ocm-controller"), file: filepath.Join(dir, "hub-args")}
	a.set(b, "")
	script := fmt.Sprintf("#!/bin/sh\n# The hub mode's extra flags, set by the scale harness.\nif [ \"$1\" = hub ] && [ -s %[1]q ]; then exec %[2]q \"$@\" $(cat %[1]q); fi\nexec %[2]q \"$@\"\n", a.file, bin)
	if err := os.WriteFile(a.wrapper, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	return a
}

// set makes the hub controller's next start add args (space-separated
// flags) and those of -hub-args to its own.
func (a *hubArgs) set(b *testing.B, args string) {
	b.Helper()
	if err := os.WriteFile(a.file, []byte(strings.TrimSpace(*extraHubArgs+" "+args)), 0o644); err != nil {
		b.Fatal(err)
	}
}

// check fails b unless process pid runs with every flag of args.
func (a *hubArgs) check(b *testing.B, pid int, args string) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		b.Fatal(err)
	}
	have := map[string]bool{}
	for _, arg := range bytes.Split(data, []byte{0}) {
		have[string(arg)] = true
	}
	for _, want := range strings.Fields(args) {
		if !have[want] {
			b.Fatalf("the hub controller (pid %d) runs without %s: %q", pid, want, bytes.ReplaceAll(data, []byte{0}, []byte{' '}))
		}
	}
}
