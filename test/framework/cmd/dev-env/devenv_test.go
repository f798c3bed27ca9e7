package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestUpDown runs `dev-env up` and `dev-env down` as `make dev-env` and
// `make dev-env-down` do, and checks that the clusters answer in between and
// that no process is left afterwards.
func TestUpDown(t *testing.T) {
	framework.SkipIfShort(t)
	root, err := framework.RepoRoot()
	require.NoError(t, err)
	bin := t.TempDir()
	for pkg, name := range map[string]string{
		"./test/framework/cmd/dev-env": "dev-env",
	} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		build.Dir = root
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build %s: %s", pkg, out)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(filepath.Join(bin, "dev-env"), append(args, "--dir", dir)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Run(), "dev-env %s: %s", strings.Join(args, " "), out.String())
		return out.String()
	}
	t.Cleanup(func() { run("down") }) // a no-op when the test got that far

	out := run("up", "--kube-bin-dir", filepath.Join(root, "bin", "kube"), "--dist-dir", filepath.Join(root, "dist"), "--clusters", "hub,cluster1", "--previous", "cluster1")
	assert.Contains(t, out, "export KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
	assert.Contains(t, run("up", "--clusters", "hub,cluster1"), "already running", "a second up must not start a second environment")
	// An up for other clusters than those running is refused: it cannot
	// give what it was asked for.
	other := exec.Command(filepath.Join(bin, "dev-env"), "up", "--dir", dir)
	out2, err := other.CombinedOutput()
	assert.Error(t, err, "dev-env up for the default clusters while hub,cluster1 run: %s", out2)
	assert.Contains(t, string(out2), "make dev-env-down")

	pidBytes, err := os.ReadFile(filepath.Join(dir, pidFile))
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(pidBytes))
	require.NoError(t, err)
	children := childPIDs(t, pid)
	require.NotEmpty(t, children, "the environment runs no processes")

	kubeconfig, err := clientcmd.LoadFromFile(filepath.Join(dir, "kubeconfig"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"hub", "cluster1"}, keys(kubeconfig.Contexts))
	kubeletVersions := map[string]string{}
	for ctxName := range kubeconfig.Contexts {
		kubectl := exec.Command(filepath.Join(root, "bin", "kube", "kubectl"), "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--context", ctxName,
			"get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion}{"\n"}{end}`)
		out, err := kubectl.CombinedOutput()
		require.NoError(t, err, "kubectl --context %s: %s", ctxName, out)
		name, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		assert.Equal(t, ctxName+"-control-plane", name, "each cluster has its node")
		kubeletVersions[ctxName] = version
	}
	assert.NotEqual(t, kubeletVersions["hub"], kubeletVersions["cluster1"], "cluster1 (--previous) runs another Kubernetes release than the hub: %v", kubeletVersions)

	assert.Contains(t, run("down"), "stopped")
	for _, p := range append(children, pid) {
		assert.ErrorIs(t, syscall.Kill(p, 0), syscall.ESRCH, "process %d is still running after down", p)
	}
	assert.Contains(t, run("down"), "not running")
}

// childPIDs returns the PIDs whose parent is pid, from /proc.
func childPIDs(t *testing.T, pid int) []int {
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces; the parent PID is
		// the second field after its closing parenthesis.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			pids = append(pids, p)
		}
	}
	return pids
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
