package workcli

import (
	"context"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestWorkCLI runs the admission and CLI tests against one hub.
func TestWorkCLI(t *testing.T) {
	framework.SkipIfShort(t)
	ctx := context.Background()
	env, c := setup(ctx, t)
	t.Run("admission", func(t *testing.T) { testAdmission(ctx, t, c) })
	t.Run("cli", func(t *testing.T) { testCLI(ctx, t, env, c) })
}
