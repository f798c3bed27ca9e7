package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
)

// startNodes starts an environment whose clusters have nodes, with the
// images of `make image sandbox-images`.
func startNodes(t *testing.T, clusters ...string) *Environment {
	t.Helper()
	layouts, err := DefaultImages()
	require.NoError(t, err)
	return StartForTestWith(t, Options{Clusters: clusters, Nodes: true, Images: layouts})
}

// runPod runs a busybox Pod with command on cluster cs until it ends, and
// returns its phase and log.
func runPod(t *testing.T, cs kubernetes.Interface, name string, command ...string) (corev1.PodPhase, string) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: command}},
		},
	}
	_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	var phase corev1.PodPhase
	Eventually(t.Context(), t, 2*time.Minute, "Pod "+name+" to end", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	logs, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	return phase, string(logs)
}

func TestNodes(t *testing.T) {
	SkipIfShort(t)
	sysctlsBefore := readSysctls(t)
	env := startNodes(t, "hub", "cluster1")
	hub, cluster1 := env.Cluster("hub"), env.Cluster("cluster1")
	raw, err := os.ReadFile(inotifySysctl)
	require.NoError(t, err)
	instances, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, instances, minInotifyInstances, "fs.inotify.max_user_instances with nodes running")

	t.Run("a Pod runs on the node and its log is read through the API server", func(t *testing.T) {
		phase, logs := runPod(t, hub.Clientset(), "hello", "sh", "-c", "echo hello from the node")
		assert.Equal(t, corev1.PodSucceeded, phase)
		assert.Equal(t, "hello from the node\n", logs)
		n, err := hub.Clientset().CoreV1().Nodes().Get(t.Context(), hub.NodeName(), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "hub-control-plane", n.Name)
	})

	t.Run("the nodes' cgroup weighs NodesCPUShares against the host's processes", func(t *testing.T) {
		hs, err := host.V1Hierarchies()
		require.NoError(t, err)
		seen := false
		for _, h := range hs {
			if !host.HasController(h, "cpu") {
				continue
			}
			seen = true
			b, err := os.ReadFile(filepath.Join(h, host.CgroupParent, "cpu.shares"))
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(host.NodesCPUShares), strings.TrimSpace(string(b)), "cpu.shares of %s", filepath.Join(h, host.CgroupParent))
		}
		assert.True(t, seen, "no cgroup v1 hierarchy with the cpu controller in %v", hs)
	})

	t.Run("a Pod reaches its API server through the kubernetes Service, and another cluster's", func(t *testing.T) {
		// Plain HTTP to an API server's TLS port gets Go's answer, which is
		// enough to show the connection is made.
		host, port, err := net.SplitHostPort(strings.TrimPrefix(hub.Server(), "https://"))
		require.NoError(t, err)
		phase, logs := runPod(t, cluster1.Clientset(), "reach", "sh", "-c", fmt.Sprintf(
			`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 10 "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" | grep -q 'HTTPS server' && echo own ok; `+
				`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 10 %s %s | grep -q 'HTTPS server' && echo hub ok`, host, port))
		assert.Equal(t, corev1.PodSucceeded, phase, logs)
		assert.Equal(t, "own ok\nhub ok\n", logs)
	})

	t.Run("images come from the environment's registry under their real names", func(t *testing.T) {
		assert.Contains(t, env.Images(), "quay.io/kubectl-ocm/helloworld-addon:latest")
		assert.Contains(t, env.Images(), "index.docker.io/library/busybox:latest")
		// A name no layout holds is not fetched from anywhere else.
		ctx := t.Context()
		cs := hub.Clientset()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "absent", Namespace: "default"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "docker.io/library/no-such-image:1"}}},
		}
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		Eventually(t.Context(), t, time.Minute, "the Pod to fail pulling", func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "absent", metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
				return false, err
			}
			r := p.Status.ContainerStatuses[0].State.Waiting.Reason
			return r == "ErrImagePull" || r == "ImagePullBackOff", nil
		})
	})

	t.Run("an image tagged under another registry's name runs", func(t *testing.T) {
		require.NoError(t, env.TagImage(t.Context(), "index.docker.io/library/busybox:latest", "registry.example.test/tools/box:v1"))
		ctx := t.Context()
		cs := hub.Clientset()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "tagged", Namespace: "default"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "main", Image: "registry.example.test/tools/box:v1", Command: []string{"echo", "tagged"},
			}}},
		}
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		Eventually(t.Context(), t, time.Minute, "the tagged image's Pod to succeed", func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "tagged", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodSucceeded, err
		})
	})

	t.Run("a killed container is restarted by the kubelet", func(t *testing.T) {
		cs := hub.Clientset()
		startPod(t, cs, "victim", "sleep", "3600")
		id, err := hub.KillContainer(t.Context(), "default", "victim", "main")
		require.NoError(t, err)
		Eventually(t.Context(), t, time.Minute, "the container to run again", func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "victim", metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false, err
			}
			s := p.Status.ContainerStatuses[0]
			return s.RestartCount == 1 && s.State.Running != nil && !strings.HasSuffix(s.ContainerID, id), nil
		})
	})

	t.Run("the host guards the Pod and Service ranges: an unused address fails at once", func(t *testing.T) {
		out, err := exec.Command("ip", "route", "show", "type", "unreachable").Output()
		require.NoError(t, err)
		for _, c := range env.Clusters() {
			nn := env.slot.Node(slices.Index(env.Clusters(), c))
			assert.Contains(t, string(out), nn.PodCIDR.String()+" metric")
			assert.Contains(t, string(out), c.ServiceCIDR()+" metric")
		}
		_, svc, err := net.ParseCIDR(hub.ServiceCIDR())
		require.NoError(t, err)
		unused := append(net.IP(nil), svc.IP.To4()...)
		unused[3] = 250
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(unused.String(), "443"), 30*time.Second)
		if conn != nil {
			_ = conn.Close()
		}
		require.Error(t, err)
		assert.Truef(t, errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.ECONNREFUSED),
			"dial %s: %v, want no route (not a timeout)", unused, err)
	})

	t.Run("the kubelets leave the machine's kernel settings alone", func(t *testing.T) {
		assert.Equal(t, sysctlsBefore, readSysctls(t))
	})
}

// readSysctls reads the machine-wide settings a kubelet would change.
func readSysctls(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for key := range kubeletSysctls {
		b, err := os.ReadFile("/proc/sys/" + key)
		if err == nil {
			out[key] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// hostState is what an environment with nodes may change on the host, and
// must leave as it found it.
//
// Processes are the one part that other packages' tests change freely (each
// runs its own control planes from bin/kube), so only the processes that can
// be told apart count: those in a node's cgroup, named by that cgroup so that
// other slots' nodes can be left out, and those that name dir, the
// environment's own directory, on their command line.
func hostState(t *testing.T, dir string) map[string]string {
	t.Helper()
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%s %v: %v: %s", name, args, err, out)
		}
		return string(out)
	}
	counters := regexp.MustCompile(`\[\d+:\d+\]`)
	var iptables []string
	for _, line := range strings.Split(run("iptables-save"), "\n") {
		if !strings.HasPrefix(line, "#") {
			iptables = append(iptables, counters.ReplaceAllString(line, ""))
		}
	}
	var mounts []string
	mi, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			mounts = append(mounts, f[4])
		}
	}
	var cgroups []string
	hs, err := host.CgroupHierarchies()
	require.NoError(t, err)
	for _, h := range hs {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				cgroups = append(cgroups, filepath.Join(h, e.Name()))
			}
		}
	}
	var procs []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if err != nil {
			continue
		}
		if cg := nodeCgroupOf(d.Name()); cg != "" {
			procs = append(procs, exe+" on node "+cg)
		} else if cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); bytes.Contains(cmdline, []byte(dir)) {
			procs = append(procs, exe)
		}
	}
	slices.Sort(procs)
	_, stateErr := os.Stat(host.StateDir)
	return map[string]string{
		"network namespaces": run("ip", "netns", "list"),
		"links":              run("ip", "-br", "link"),
		"routes":             run("ip", "route", "show", "table", "all"),
		"iptables":           strings.Join(iptables, "\n"),
		"mounts":             strings.Join(mounts, "\n"),
		"cgroups":            strings.Join(cgroups, "\n"),
		"node processes":     strings.Join(procs, "\n"),
		"state":              "state: " + fmt.Sprint(stateErr == nil),
	}
}

func TestNodeTeardownLeavesTheHostAsFound(t *testing.T) {
	SkipIfShort(t)
	dir := t.TempDir()
	othersBefore := liveSlotNames(-1)
	before := hostState(t, dir)
	layouts, err := DefaultImages()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env, err := Start(ctx, Options{Clusters: []string{"hub"}, Nodes: true, Images: layouts, Dir: dir})
	require.NoError(t, err)
	ours := env.slot.N
	startPod(t, env.Cluster("hub").Clientset(), "sleeper", "sleep", "3600")
	require.NoError(t, env.Stop())
	after := hostState(t, dir)
	// Other environments with nodes may run beside this test (other
	// packages' tests, a dev-env), and start or stop while it runs: what
	// names their slots, then or now, is theirs.
	others := append(othersBefore, liveSlotNames(ours)...)
	for k := range before {
		assert.Equal(t, withoutLines(before[k], others), withoutLines(after[k], others), "the host's %s after the environment stopped", k)
	}
}

// startPod starts a busybox Pod with command on cluster cs and waits until
// it runs.
func startPod(t *testing.T, cs kubernetes.Interface, name string, command ...string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: command}}},
	}
	_, err := cs.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	Eventually(t.Context(), t, 2*time.Minute, "Pod "+name+" to run", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
}

// liveSlotNames returns what names the slots other than ours that are
// taken now: their links, namespaces, addresses, ranges and cgroups, and
// the state all slots share.
func liveSlotNames(ours int) []string {
	entries, _ := os.ReadDir(host.SlotsDir)
	var names []string
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%d", &n); err != nil || n == ours {
			continue
		}
		s := &host.Slot{N: n}
		names = append(names, s.BridgeName(), fmt.Sprintf("172.31.%d.", n))
		for i := range host.MaxNodes {
			nn := s.Node(i)
			names = append(names, nn.Name, nn.PodCIDR.String(), nn.ServiceCIDR.String())
		}
	}
	if len(names) > 0 {
		names = append(names, host.CgroupParent, "/run/netns", "state:")
	}
	return names
}

// nodeCgroupOf returns the node whose cgroup (host.CgroupParent/NODE) process pid
// is in, or "" when it is in none.
func nodeCgroupOf(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-ID:controllers:/path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		elems := strings.Split(strings.TrimPrefix(parts[2], "/"), "/")
		if len(elems) >= 2 && elems[0] == host.CgroupParent {
			return elems[1]
		}
	}
	return ""
}

// withoutLines drops the lines of s that hold any of names.
func withoutLines(s string, names []string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(line, n) }) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
