// Package host makes and removes what the nodes of a test environment
// need on the machine itself: slots (the numbers that name and address
// everything an environment makes on the host), the host's side of the
// nodes' network (a bridge, veths, network namespaces, routes), and the
// nodes' cgroups. Everything it makes, it can find again and remove, also
// after the process that made it was killed.
package host

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// An environment with nodes takes a slot: a number that names and addresses
// everything it makes on the host, so that environments running side by side
// (tests of several packages, a dev-env beside them) never share a name, an
// address or a range, and so that what a killed environment left behind can
// be found and removed by the next one that takes its slot.
//
// Slot s of the host gives:
//   - the bridge ocm-br<s>, 172.31.<s>.1/24 on the host: every API server of
//     the environment listens there, and its nodes' eth0 are on it;
//   - node i (0 to MaxNodes-1): network namespace ocm-s<s>n<i>, its veth's
//     host end ocm-s<s>n<i>, eth0 at 172.31.<s>.<10+i>, Pod range
//     10.<244+s/32>.<(s%32)*8+i>.0/24 and Service range
//     10.<96+s/32>.<(s%32)*8+i>.0/24, cgroup kubectl-ocm/s<s>n<i> in
//     every hierarchy.
//
// The host carries an unreachable route for every Pod and Service range of
// its nodes, so a packet for an address nothing serves never leaves the
// machine; a more specific route (a lower metric) sends the range to its
// node while the node runs.
const (
	firstSlot = 1
	lastSlot  = 127
	MaxNodes  = 8
	// SlotsDir holds one directory per slot taken, with the owner's PID and
	// start time. /run is emptied at boot, as the slots' resources are.
	SlotsDir = "/run/kubectl-ocm/slots"
	// StateDir holds the slots, and the mark that the environments made
	// /run/netns (iproute2 makes it a mount on first use).
	StateDir = "/run/kubectl-ocm"
	// netnsMark says that /run/netns was not there before the first slot.
	netnsMark = StateDir + "/netns-made"
	// slotsLock serializes taking and sweeping slots across processes: a
	// lock on a directory that is never removed.
	slotsLock = "/run"
	// guardMetric is the metric of the unreachable routes: higher than the
	// routes to the nodes, which win while they exist.
	guardMetric = 4000
	// CgroupParent is the cgroup, in every hierarchy, under which each node
	// gets its own.
	CgroupParent = "kubectl-ocm"
)

// Slot is a slot this process holds.
type Slot struct {
	// N is the slot's number.
	N   int
	dir string
}

// BridgeName is the host bridge of the slot.
func (s *Slot) BridgeName() string { return fmt.Sprintf("ocm-br%d", s.N) }

// HostIP is the bridge's address, where the slot's API servers listen.
func (s *Slot) HostIP() net.IP { return net.IPv4(172, 31, byte(s.N), 1).To4() }

// NodeNet names and addresses node i of the slot.
type NodeNet struct {
	// Name is the network namespace, the host end of its veth, and its
	// cgroup under CgroupParent.
	Name        string
	IP          net.IP
	PodCIDR     *net.IPNet
	ServiceCIDR *net.IPNet
}

// Node returns the names and addresses of node i (0 to MaxNodes-1) of the
// slot.
func (s *Slot) Node(i int) NodeNet {
	third := byte((s.N%32)*MaxNodes + i)
	return NodeNet{
		Name:        fmt.Sprintf("ocm-s%dn%d", s.N, i),
		IP:          net.IPv4(172, 31, byte(s.N), byte(10+i)).To4(),
		PodCIDR:     &net.IPNet{IP: net.IPv4(10, byte(244+s.N/32), third, 0).To4(), Mask: net.CIDRMask(24, 32)},
		ServiceCIDR: &net.IPNet{IP: net.IPv4(10, byte(96+s.N/32), third, 0).To4(), Mask: net.CIDRMask(24, 32)},
	}
}

// Gateway is the first address of a range: the Pod bridge's address on the
// node, or the Service IP of the kubernetes Service.
func Gateway(n *net.IPNet) net.IP {
	ip := append(net.IP(nil), n.IP.To4()...)
	ip[3]++
	return ip
}

// TakeSlot takes the first free slot. A slot whose owner is gone is swept
// (everything it names is removed from the host) and taken.
func TakeSlot(logf func(string, ...any)) (*Slot, error) {
	lock, err := lockFile(slotsLock)
	if err != nil {
		return nil, err
	}
	defer unlockFile(lock)
	if err := os.MkdirAll(SlotsDir, 0o755); err != nil {
		return nil, err
	}
	if !isMountPoint("/run/netns") {
		if _, err := os.Stat(netnsMark); err != nil {
			if err := os.WriteFile(netnsMark, nil, 0o644); err != nil {
				return nil, err
			}
		}
	}
	for n := firstSlot; n <= lastSlot; n++ {
		dir := filepath.Join(SlotsDir, strconv.Itoa(n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			if !errors.Is(err, os.ErrExist) || slotOwnerAlive(dir) {
				continue
			}
			logf("slot %d was left by a process that is gone: removing what it left on the host", n)
			s := &Slot{N: n, dir: dir}
			if err := s.sweep(); err != nil {
				return nil, fmt.Errorf("remove what slot %d's last owner left: %w", n, err)
			}
		}
		owner := fmt.Sprintf("%d %s\n", os.Getpid(), processStart(os.Getpid()))
		if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(owner), 0o644); err != nil {
			return nil, err
		}
		return &Slot{N: n, dir: dir}, nil
	}
	return nil, fmt.Errorf("every slot %d-%d of %s is in use: too many environments with nodes run on this machine", firstSlot, lastSlot, SlotsDir)
}

// Release sweeps the slot and gives it back.
func (s *Slot) Release() error {
	lock, err := lockFile(slotsLock)
	if err != nil {
		return err
	}
	defer unlockFile(lock)
	if err := s.sweep(); err != nil {
		return err
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	return cleanStateDir()
}

// cleanStateDir removes, once no slot is taken, what the environments made
// besides their slots: /run/netns if they made it, and their own state.
func cleanStateDir() error {
	left, err := os.ReadDir(SlotsDir)
	if err != nil || len(left) > 0 {
		return nil //nolint:nilerr // another environment still runs, or nothing is there
	}
	if _, err := os.Stat(netnsMark); err == nil {
		if entries, err := os.ReadDir("/run/netns"); err == nil && len(entries) == 0 {
			if isMountPoint("/run/netns") {
				if err := syscall.Unmount("/run/netns", syscall.MNT_DETACH); err != nil {
					return fmt.Errorf("unmount /run/netns: %w", err)
				}
			}
			if err := os.Remove("/run/netns"); err != nil {
				return err
			}
		}
	}
	return os.RemoveAll(StateDir)
}

// isMountPoint reports whether path is a mount point of this mount
// namespace.
func isMountPoint(path string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}

// sweep removes from the host everything the slot names: the processes in
// its nodes' cgroups and the cgroups, the network namespaces, links and
// routes. It is what teardown does last, and what a new owner does first
// when the old one died without it.
func (s *Slot) sweep() error {
	var errs []error
	for i := range MaxNodes {
		nn := s.Node(i)
		errs = append(errs, RemoveCgroup(filepath.Join(CgroupParent, nn.Name)))
		errs = append(errs, deleteNetns(nn.Name))
		errs = append(errs, deleteLink(nn.Name))
		for _, r := range []*net.IPNet{nn.PodCIDR, nn.ServiceCIDR} {
			errs = append(errs, deleteRoutes(r))
		}
	}
	errs = append(errs, deleteLink(s.BridgeName()))
	removeCgroupParent()
	return errors.Join(errs...)
}

// slotOwnerAlive reports whether the process recorded in the slot directory
// still runs (the same PID with the same start time).
func slotOwnerAlive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "owner"))
	if err != nil {
		// Being written by a process holding the lock cannot be: the lock
		// is held. A directory without an owner is a crash mid-write.
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	return processStart(pid) == f[1]
}

// processStart returns the start time of process pid in clock ticks since
// boot (field 22 of /proc/<pid>/stat), which tells a PID reused apart.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	// The command name (field 2) is in parentheses and may hold spaces.
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	// f[0] is field 3; field 22 is f[19].
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func lockFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}

// SweepAbandoned removes from the host what every environment with nodes
// whose process is gone left there (its nodes' processes, cgroups, network
// namespaces, links and routes), and says which slots it swept.
func SweepAbandoned() ([]string, error) {
	entries, err := os.ReadDir(SlotsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lock, err := lockFile(slotsLock)
	if err != nil {
		return nil, err
	}
	defer unlockFile(lock)
	var swept []string
	var errs []error
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s := &Slot{N: n, dir: filepath.Join(SlotsDir, e.Name())}
		if slotOwnerAlive(s.dir) {
			continue
		}
		if err := s.sweep(); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.RemoveAll(s.dir))
		swept = append(swept, fmt.Sprintf("slot %d: bridge %s", n, s.BridgeName()))
	}
	errs = append(errs, cleanStateDir())
	return swept, errors.Join(errs...)
}
