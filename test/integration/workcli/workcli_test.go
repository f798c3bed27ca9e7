package workcli

import (
	"testing"
)

// TestWorkCLI runs the admission and CLI tests against one hub.
func TestWorkCLI(t *testing.T) {
	ctx, env, c := setup(t)
	t.Run("admission", func(t *testing.T) { testAdmission(ctx, t, c) })
	t.Run("cli", func(t *testing.T) { testCLI(ctx, t, env, c) })
}
