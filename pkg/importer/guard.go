package importer

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Guard is the rule for the addresses the importer dials with a credential
// it was given: never an address of refused (a cloud's metadata service,
// the importer's own Pod, an address that is no single host), nor one of
// them in NAT64 form. Loopback addresses are allowed when AllowLoopback.
type Guard struct {
	AllowLoopback bool
}

// refusal is one range of addresses Guard refuses, and why.
type refusal struct {
	prefix   netip.Prefix
	why      string
	loopback bool // allowed when Guard.AllowLoopback
}

// refused are the ranges Guard refuses. IPv4 addresses in IPv6 form
// (::ffff:a.b.c.d) are checked as IPv4; nat64 is checked apart.
var refused = []refusal{
	// The importer's own Pod.
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address is the importer itself, not a cluster", true},
	{netip.MustParsePrefix("::1/128"), "a loopback address is the importer itself, not a cluster", true},
	// Link-local: the metadata service of AWS, GCP, Azure, OpenStack and
	// others at 169.254.169.254, and the node's own link-local services.
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (such as a cloud's metadata service) is never a cluster to import", false},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address (such as a cloud's metadata service) is never a cluster to import", false},
	// AWS's metadata service over IPv6 (Nitro instances).
	{netip.MustParsePrefix("fd00:ec2::254/128"), "it is AWS's instance metadata service, never a cluster to import", false},
	// Alibaba Cloud's metadata service.
	{netip.MustParsePrefix("100.100.100.200/32"), "it is Alibaba Cloud's instance metadata service, never a cluster to import", false},
	// Azure's WireServer, which hands out VM extension configuration.
	{netip.MustParsePrefix("168.63.129.16/32"), "it is Azure's WireServer, never a cluster to import", false},
	// "This network" (0.0.0.0 reaches the local host) and ::.
	{netip.MustParsePrefix("0.0.0.0/8"), "not a unicast address", false},
	{netip.MustParsePrefix("::/128"), "not a unicast address", false},
	// Multicast and broadcast.
	{netip.MustParsePrefix("224.0.0.0/4"), "not a unicast address", false},
	{netip.MustParsePrefix("255.255.255.255/32"), "not a unicast address", false},
	{netip.MustParsePrefix("ff00::/8"), "not a unicast address", false},
}

// nat64 are the NAT64 prefixes of RFC 6052 and RFC 8215, with the IPv4
// address in the last 32 bits: 64:ff9b::a9fe:a9fe is 169.254.169.254
// through the network's NAT64 gateway, so that IPv4 address is checked as
// if dialed. A prefix a network chose for itself cannot be told from an
// ordinary IPv6 address.
var nat64 = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),   // the well-known prefix
	netip.MustParsePrefix("64:ff9b:1::/48"), // for local use, in its /96 form
}

// Control is a net.Dialer Control function that refuses the addresses
// Guard forbids. It sees the address after name resolution, so a host name
// that resolves to a forbidden address is refused too.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("refusing to dial %s: not an IP address", address)
	}
	return g.Check(ip)
}

// Check returns an error naming why ip may not be dialed, nil when it may.
func (g Guard) Check(ip net.IP) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("refusing to dial %s: not an IP address", ip)
	}
	addr = addr.Unmap()
	if slices.ContainsFunc(nat64, func(p netip.Prefix) bool { return p.Contains(addr) }) {
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if why := g.refuses(v4); why != "" {
			return fmt.Errorf("refusing to dial %s (%s through NAT64): %s", ip, v4, why)
		}
		return nil
	}
	if why := g.refuses(addr); why != "" {
		return fmt.Errorf("refusing to dial %s: %s", ip, why)
	}
	return nil
}

// refuses returns why g refuses addr, "" when it does not.
func (g Guard) refuses(addr netip.Addr) string {
	for _, r := range refused {
		if r.loopback && g.AllowLoopback {
			continue
		}
		if r.prefix.Contains(addr) {
			return r.why
		}
	}
	return ""
}

// Guarded returns a copy of cfg whose connections go through a dialer that
// applies g, with timeout for each request.
func (g Guard) Guarded(cfg *rest.Config, timeout time.Duration) *rest.Config {
	out := rest.CopyConfig(cfg)
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.Control}
	out.Dial = d.DialContext
	out.Proxy = nil
	out.Timeout = timeout
	return out
}
