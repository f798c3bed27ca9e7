package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
)

// nodeHostHelp ends every error of checkNodeHost.
const nodeHostHelp = "Nodes need root and a Linux kernel with network namespaces, veth, bridges, overlayfs, iptables and cgroups (hack/node-deps.sh installs the Debian packages they use). Where that cannot be, run the product on kind instead: see docs/install.md#on-kind-where-docker-is-available."

// checkNodeHost checks that this machine can run nodes, and names
// everything it lacks.
func checkNodeHost(binDir string) error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (running as uid "+fmt.Sprint(os.Geteuid())+")")
	}
	for _, cmd := range []string{"ip", "nsenter", "unshare", "mount", "iptables", "runc"} {
		if _, err := exec.LookPath(cmd); err != nil {
			if _, err := os.Stat(filepath.Join("/usr/sbin", cmd)); err != nil {
				missing = append(missing, "the command "+cmd)
			}
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", plugin)); err != nil {
			missing = append(missing, "the CNI plugin /usr/lib/cni/"+plugin+" (Debian's containernetworking-plugins)")
		}
	}
	for _, b := range nodeBinaries {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			missing = append(missing, b+" in "+binDir+" (make kube-bins)")
		}
	}
	if fs, err := os.ReadFile("/proc/filesystems"); err != nil || !strings.Contains(string(fs), "overlay") {
		if _, err := os.Stat("/sys/module/overlay"); err != nil {
			missing = append(missing, "the overlay filesystem")
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		missing = append(missing, "network namespaces")
	}
	hs, err := host.V1Hierarchies()
	if err != nil {
		missing = append(missing, "cgroups ("+err.Error()+")")
	}
	for _, sub := range []string{"cpu", "cpuacct", "cpuset", "memory", "pids"} {
		found := false
		for _, h := range hs {
			if host.HasController(h, sub) {
				found = true
			}
		}
		if !found {
			missing = append(missing, "the cgroup v1 controller "+sub)
		}
	}
	if len(missing) > 0 {
		return errors.New("this machine cannot run the clusters' nodes: missing " + strings.Join(missing, "; ") + ". " + nodeHostHelp)
	}
	return nil
}

// minInotifyInstances is the fs.inotify.max_user_instances nodes need:
// every kube-apiserver, controller manager, scheduler, kubelet and
// containerd holds several inotify instances, all of one user, and the
// kernel's default of 128 runs out with two fleets of three clusters with
// nodes (kubelets then fail to start). kind's documentation gives its users
// the same advice.
const minInotifyInstances = 512

// inotifySysctl is the limit's file.
const inotifySysctl = "/proc/sys/fs/inotify/max_user_instances"

// ensureInotifyInstances raises fs.inotify.max_user_instances to
// minInotifyInstances when it is lower, and says so. The setting is the
// kernel's and stays after the environment stops, as a sysctl an operator
// sets for kind does.
func ensureInotifyInstances(logf func(string, ...any)) error {
	raw, err := os.ReadFile(inotifySysctl)
	if err != nil {
		return fmt.Errorf("read %s: %w", inotifySysctl, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("%s holds %q: %w", inotifySysctl, raw, err)
	}
	if n >= minInotifyInstances {
		return nil
	}
	if err := os.WriteFile(inotifySysctl, []byte(strconv.Itoa(minInotifyInstances)), 0o644); err != nil {
		return fmt.Errorf("raise fs.inotify.max_user_instances from %d to %d, which nodes need (sysctl -w fs.inotify.max_user_instances=%d as root): %w",
			n, minInotifyInstances, minInotifyInstances, err)
	}
	logf("raised fs.inotify.max_user_instances from %d to %d: the nodes' kubelets and containerd need more", n, minInotifyInstances)
	return nil
}
