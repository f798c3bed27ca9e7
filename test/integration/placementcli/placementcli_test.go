package placementcli

import (
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestPlacementCLI runs the clusterset, placement and work --placement tests
// against one hub, in order: the placements use the sets the clusterset tests
// bind, and the works use the placements.
func TestPlacementCLI(t *testing.T) {
	ctx, env, c := setup(t)
	k := clitest.CLI{Kubeconfig: env.Kubeconfig()}
	t.Run("clusterset", func(t *testing.T) { testClusterSet(ctx, t, k, c) })
	t.Run("clusterset namespaces", func(t *testing.T) { testClusterSetNamespaces(ctx, t, k, c) })
	t.Run("clusterset dry run", func(t *testing.T) { testClusterSetDryRun(ctx, t, env, k, c) })
	t.Run("placement", func(t *testing.T) { testPlacement(ctx, t, k, c) })
	t.Run("explain", func(t *testing.T) { testExplain(ctx, t, k, c) })
	t.Run("namespace user", func(t *testing.T) { testNamespaceUser(ctx, t, env, c) })
	t.Run("work", func(t *testing.T) { testWork(ctx, t, k, c) })
}
