// Package kit is the test kit every test tier shares (test/integration,
// test/e2e and test/bench): the small checks and object writers they all
// use, written once here, and below it hubtest (a hub for the integration
// tests), agenttest (in-process agents and fleets that join with `kubectl
// ocm join`), clitest (the CLI in-process), identityhub (a hub on which
// every identity exists), mcptest (an MCP client) and payloadgen (large
// payloads of generated manifests).
package kit

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Must fails t with what and err when err is not nil.
func Must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// MustCreate creates obj with c, failing t when it cannot.
func MustCreate(ctx context.Context, t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// ErrorSays reports whether err is not nil and its message contains each
// of says: the condition of a poll that waits for a refusal whose kind
// alone (apierrors.IsForbidden, ...) does not tell it from another. A test
// that expects an error asserts it with require.ErrorContains instead.
func ErrorSays(err error, says ...string) bool {
	if err == nil {
		return false
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			return false
		}
	}
	return true
}

// Step is one named step of a test whose steps share a fixture.
type Step struct {
	// Name names the subtest.
	Name string
	// Run is the step.
	Run func(t *testing.T)
}

// RunSteps runs steps in order, each as a subtest of t, and stops t at the
// first step that fails: each step builds on what the ones before it did.
func RunSteps(t *testing.T, steps ...Step) {
	t.Helper()
	for _, s := range steps {
		if !t.Run(s.Name, s.Run) {
			t.Fatalf("step %q failed; the steps after it build on it and did not run", s.Name)
		}
	}
}
