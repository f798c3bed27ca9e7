package framework

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNodesRefusedWhereTheyCannotRun checks that an environment with nodes
// on a machine that lacks what they need stops before it starts anything,
// naming each missing piece and where to go instead; it never falls back to
// clusters without nodes.
func TestNodesRefusedWhereTheyCannotRun(t *testing.T) {
	bin := t.TempDir()
	err := checkNodeHost(bin)
	require.Error(t, err)
	for _, b := range nodeBinaries {
		assert.ErrorContains(t, err, b+" in "+bin+" (make kube-bins)")
	}
	assert.ErrorContains(t, err, "docs/install.md#on-kind-where-docker-is-available")

	// Start refuses the same way, before it makes anything.
	// A directory with the control plane's binaries but none of the node's.
	empty := t.TempDir()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		require.NoError(t, os.WriteFile(filepath.Join(empty, b), nil, 0o755))
	}
	dir := t.TempDir()
	_, err = Start(context.Background(), Options{Clusters: []string{"hub"}, Nodes: true, BinDir: empty, Dir: dir})
	require.ErrorContains(t, err, "this machine cannot run the clusters' nodes: missing")
	assert.ErrorContains(t, err, "kubelet in "+empty)
	entries, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, entries, "Start made something before refusing")
}
