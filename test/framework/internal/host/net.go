package host

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The host's side of the nodes' network, made with iproute2's ip.

// ip runs ip with args and returns an error holding its output.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// linkExists reports whether the host has a link named name.
func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// CreateBridge makes the slot's bridge with the host's address on it.
func (s *Slot) CreateBridge() error {
	br := s.BridgeName()
	if err := ip("link", "add", br, "type", "bridge"); err != nil {
		return err
	}
	if err := ip("addr", "add", s.HostIP().String()+"/24", "dev", br); err != nil {
		return err
	}
	return ip("link", "set", br, "up")
}

// CreateNodeNet makes node nn's network namespace with eth0 on the slot's
// bridge, the unreachable routes that guard its ranges, and the host's routes
// to those ranges through the node.
func (s *Slot) CreateNodeNet(nn NodeNet) error {
	// The guards first: from here on, nothing sent to the ranges leaves the
	// machine, whatever happens to the node.
	for _, r := range []*net.IPNet{nn.PodCIDR, nn.ServiceCIDR} {
		if err := ip("route", "add", "unreachable", r.String(), "metric", strconv.Itoa(guardMetric)); err != nil {
			return err
		}
	}
	if err := ip("netns", "add", nn.Name); err != nil {
		return err
	}
	if err := ip("link", "add", nn.Name, "type", "veth", "peer", "name", "eth0", "netns", nn.Name); err != nil {
		return err
	}
	steps := [][]string{
		{"link", "set", nn.Name, "master", s.BridgeName()},
		{"link", "set", nn.Name, "up"},
		{"-n", nn.Name, "link", "set", "lo", "up"},
		{"-n", nn.Name, "addr", "add", nn.IP.String() + "/24", "dev", "eth0"},
		{"-n", nn.Name, "link", "set", "eth0", "up"},
	}
	for _, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
	}
	// The node forwards between its Pods' bridge and eth0. It has no default
	// route: a Pod reaches the environment's API servers on the slot's
	// subnet, and nothing else.
	if err := nodeSysctl(nn.Name, "net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	for _, r := range []*net.IPNet{nn.PodCIDR, nn.ServiceCIDR} {
		if err := ip("route", "add", r.String(), "via", nn.IP.String(), "dev", s.BridgeName()); err != nil {
			return err
		}
	}
	return nil
}

// nodeSysctl sets a sysctl of the network namespace ns (a path under
// /proc/sys, such as net/ipv4/ip_forward).
func nodeSysctl(ns, key, value string) error {
	out, err := exec.Command("nsenter", "--net=/run/netns/"+ns, "--", "sh", "-c", `echo "$1" > "/proc/sys/$2"`, "sh", value, key).CombinedOutput()
	if err != nil {
		return fmt.Errorf("set %s=%s in network namespace %s: %w: %s", key, value, ns, err, bytes.TrimSpace(out))
	}
	return nil
}

// deleteNetns removes the named network namespace if it exists.
func deleteNetns(name string) error {
	if _, err := os.Stat(filepath.Join("/run/netns", name)); err != nil {
		return nil
	}
	return ip("netns", "delete", name)
}

// deleteLink removes the host's link name if it exists. A node's veth goes
// away on its own once the kernel frees the node's network namespace, which it
// does asynchronously after the namespace's last reference is gone; so the
// link may vanish between the check and the delete, and that is success.
func deleteLink(name string) error {
	if !linkExists(name) {
		return nil
	}
	err := ip("link", "delete", name)
	if err != nil && !linkExists(name) {
		return nil
	}
	return err
}

// deleteRoutes removes every route of the host's main table for exactly r
// (the guard and the route through the node).
func deleteRoutes(r *net.IPNet) error {
	if err := ip("route", "flush", "exact", r.String()); err != nil {
		return err
	}
	out, err := exec.Command("ip", "route", "show", "exact", r.String()).Output()
	if err != nil {
		return fmt.Errorf("ip route show exact %s: %w", r, err)
	}
	if len(bytes.TrimSpace(out)) != 0 {
		return fmt.Errorf("routes for %s remain after flushing them: %s", r, bytes.TrimSpace(out))
	}
	return nil
}
