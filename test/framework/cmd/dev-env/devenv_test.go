package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/images"
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

	t.Run("the ocm-controller image is pulled from the private registry with the credentials in private-registry.json", func(t *testing.T) {
		assert.Contains(t, out, "localhost:5001")
		creds := filepath.Join(dir, privateRegistryFile)
		fi, err := os.Stat(creds)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "credentials are for the owner only")
		dockerConfig, err := os.ReadFile(creds)
		require.NoError(t, err)
		tag, err := framework.LayoutTag(filepath.Join(root, "dist", "image", "layout"))
		require.NoError(t, err)
		cs := clientset(t, dir, "cluster1")
		_, err = cs.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "private-registry"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		image := "localhost:5001/kubectl-ocm/ocm-controller:" + tag
		_, err = cs.CoreV1().Pods("default").Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "private"},
			Spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "private-registry"}},
				Containers:       []corev1.Container{{Name: "main", Image: image, Args: []string{"--help"}}},
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		framework.Eventually(t.Context(), t, 2*time.Minute, image+" pulled", func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "private", metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false, err
			}
			if w := p.Status.ContainerStatuses[0].State.Waiting; w != nil && strings.Contains(w.Reason, "Image") {
				return false, fmt.Errorf("%s: %s", w.Reason, w.Message)
			}
			return p.Status.ContainerStatuses[0].ImageID != "", nil
		})
	})

	t.Run("load makes the images of a docker save archive run on the nodes", func(t *testing.T) {
		assert.Contains(t, out, "make dev-env-load IMAGE=<path>")
		archive := saveBusybox(t, root, "registry.devenv.test/tools/box:v1")
		assert.Contains(t, run("load", archive), "Loaded registry.devenv.test/tools/box:v1")
		for _, ctxName := range []string{"hub", "cluster1"} {
			kubectl := exec.Command(filepath.Join(root, "bin", "kube", "kubectl"), "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--context", ctxName,
				"run", "loaded", "--image=registry.devenv.test/tools/box:v1", "--restart=Never", "--command", "--", "echo", "loaded")
			out, err := kubectl.CombinedOutput()
			require.NoError(t, err, "kubectl run: %s", out)
			cs := clientset(t, dir, ctxName)
			framework.Eventually(t.Context(), t, 2*time.Minute, "the loaded image's Pod to succeed on "+ctxName, func(ctx context.Context) (bool, error) {
				p, err := cs.CoreV1().Pods("default").Get(ctx, "loaded", metav1.GetOptions{})
				return err == nil && p.Status.Phase == corev1.PodSucceeded, err
			})
		}
		bad := exec.Command(filepath.Join(bin, "dev-env"), "load", "--dir", dir, filepath.Join(dir, "kubeconfig"))
		badOut, err := bad.CombinedOutput()
		assert.Error(t, err)
		assert.Contains(t, string(badOut), "is neither an OCI layout directory nor a docker save archive")
	})

	assert.Contains(t, run("down"), "stopped")
	for _, p := range append(children, pid) {
		assert.ErrorIs(t, syscall.Kill(p, 0), syscall.ESRCH, "process %d is still running after down", p)
	}
	assert.Contains(t, run("down"), "not running")
	assert.NoFileExists(t, filepath.Join(dir, privateRegistryFile), "the credentials of a registry that is gone")
	notRunning := exec.Command(filepath.Join(bin, "dev-env"), "load", "--dir", dir, filepath.Join(root, "dist", "sandbox", "layout"))
	out3, err := notRunning.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out3), "no development environment is running in "+dir+": start one with 'make dev-env'")
}

// clientset returns a client of the environment's cluster ctxName.
func clientset(t *testing.T, dir, ctxName string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: filepath.Join(dir, "kubeconfig")},
		&clientcmd.ConfigOverrides{CurrentContext: ctxName}).ClientConfig()
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// saveBusybox writes the sandbox's busybox image as a docker save archive
// naming it tag, and returns its path.
func saveBusybox(t *testing.T, root, tag string) string {
	t.Helper()
	p, err := layout.FromPath(filepath.Join(root, "dist", "sandbox", "layout"))
	require.NoError(t, err)
	idx, err := p.ImageIndex()
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	for _, d := range m.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] != images.Busybox {
			continue
		}
		img, err := idx.Image(d.Digest)
		require.NoError(t, err)
		ref, err := name.NewTag(tag)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "box.tar")
		require.NoError(t, tarball.WriteToFile(path, ref, img))
		return path
	}
	t.Fatalf("no %s in the sandbox layout", images.Busybox)
	return ""
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
