package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where the host mounts its cgroup hierarchies.
const cgroupRoot = "/sys/fs/cgroup"

// CgroupHierarchies returns the mount points of the host's cgroup
// hierarchies: one per cgroup v1 hierarchy and, where mounted, the v2 one.
func CgroupHierarchies() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		// mountinfo: ... mount-point ... - fstype source options
		parts := strings.SplitN(line, " - ", 2)
		if len(parts) != 2 {
			continue
		}
		fstype := strings.Fields(parts[1])
		f := strings.Fields(parts[0])
		if len(fstype) == 0 || len(f) < 5 || (fstype[0] != "cgroup" && fstype[0] != "cgroup2") {
			continue
		}
		if strings.HasPrefix(f[4], cgroupRoot) && !slices.Contains(out, f[4]) {
			out = append(out, f[4])
		}
	}
	return out, nil
}

// V1Hierarchies returns the cgroup v1 hierarchies, where the kubelet of a
// node on these machines keeps its Pods.
func V1Hierarchies() ([]string, error) {
	all, err := CgroupHierarchies()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range all {
		if _, err := os.Stat(filepath.Join(h, "cgroup.controllers")); err == nil {
			continue // cgroup v2
		}
		out = append(out, h)
	}
	return out, nil
}

// NodesCPUShares is the CPU weight (cpu.shares) of CgroupParent, which
// holds every node's kubelet, containerd and Pods, against the host's own
// processes, each of which weighs 1024 while it runs. With the default 1024
// all the nodes of every environment together weighed as one host thread:
// on a machine busy with control planes (make test runs dozens of API
// server, etcd and compiler threads at once) the nodes' Pods got a small
// share of what they asked for and end-to-end tests waited on them two to
// three times as long as alone. Eight host threads' weight lets the nodes
// run as if on machines of their own while they ask for little (a fleet's
// nodes about a tenth of a CPU at rest), without letting a busy Pod starve
// the control planes it talks to.
const NodesCPUShares = 8 * 1024

// MakeCgroup creates the cgroup rel (a path such as kubectl-ocm/node) and
// its parents in every v1 hierarchy. A new cpuset cgroup gets its parent's
// CPUs and memory nodes, without which no process may join it; CgroupParent
// gets the CPU weight NodesCPUShares.
func MakeCgroup(rel string) error {
	hs, err := V1Hierarchies()
	if err != nil {
		return err
	}
	for _, h := range hs {
		parts := strings.Split(rel, "/")
		for i := range parts {
			dir := filepath.Join(h, filepath.Join(parts[:i+1]...))
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("create cgroup %s: %w", dir, err)
			}
			if i == 0 && parts[0] == CgroupParent && HasController(h, "cpu") {
				if err := os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte(strconv.Itoa(NodesCPUShares)), 0o644); err != nil {
					return fmt.Errorf("set the CPU weight of %s: %w", dir, err)
				}
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
				if err != nil {
					continue // not the cpuset hierarchy
				}
				cur, _ := os.ReadFile(filepath.Join(dir, f))
				if strings.TrimSpace(string(cur)) != "" {
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return fmt.Errorf("set %s of %s: %w", f, dir, err)
				}
			}
		}
	}
	return nil
}

// HasController reports whether the cgroup v1 hierarchy mounted at h has
// controller sub.
func HasController(h, sub string) bool {
	for _, name := range strings.Split(filepath.Base(h), ",") {
		if name == sub {
			return true
		}
	}
	return false
}

// CgroupProcsFiles returns the cgroup.procs file of cgroup rel in every v1
// hierarchy: writing a PID to each moves that process into the cgroup.
func CgroupProcsFiles(rel string) ([]string, error) {
	hs, err := V1Hierarchies()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = filepath.Join(h, rel, "cgroup.procs")
	}
	return out, nil
}

// RemoveCgroup kills every process in cgroup rel and its descendants, in
// every hierarchy, and removes the cgroups, deepest first.
func RemoveCgroup(rel string) error {
	hs, err := CgroupHierarchies()
	if err != nil {
		return err
	}
	var dirs []string
	for _, h := range hs {
		root := filepath.Join(h, rel)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	if len(dirs) == 0 {
		return nil
	}
	// Kill until no process is left: a process may fork while it dies.
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := CgroupPids(dirs)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of cgroup %s do not exit after SIGKILL", pids, rel)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Deepest first; a cgroup whose last process just exited may be busy
	// for a moment.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var errs []error
	for _, d := range dirs {
		var err error
		for range 100 {
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroupParent removes the parent of the nodes' cgroups where no node
// is left under it.
func removeCgroupParent() {
	hs, err := CgroupHierarchies()
	if err != nil {
		return
	}
	for _, h := range hs {
		_ = syscall.Rmdir(filepath.Join(h, CgroupParent))
	}
}

// CgroupPids returns the processes in the cgroups dirs.
func CgroupPids(dirs []string) []int {
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
