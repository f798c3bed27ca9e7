package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// The NetworkPolicies of the agent's namespace, rendered from the
// Klusterlet's spec.networkPolicyConfiguration (see AgentValues.NetworkPolicy).
const (
	// AgentDenyNetworkPolicy selects every Pod of the agent's namespace and
	// allows nothing: what no other policy allows is denied.
	AgentDenyNetworkPolicy = "klusterlet-agent-default-deny"
	// AgentEgressNetworkPolicy opens the agent's egress to DNS and to the
	// API servers it calls.
	AgentEgressNetworkPolicy = "klusterlet-agent-egress"
	// AgentMetricsNetworkPolicy opens the agent's metrics port to
	// monitoringNamespace; rendered only when it is set.
	AgentMetricsNetworkPolicy = "klusterlet-agent-metrics"
)

// AgentMetricsPort is the port of the agent's Prometheus /metrics endpoint:
// its container port and --metrics-bind-address, and the port its
// NetworkPolicy opens to the monitoring namespace.
const AgentMetricsPort = 8080

// MetricsPort is AgentMetricsPort, for the templates.
func (AgentValues) MetricsPort() int { return AgentMetricsPort }

// AgentNetworkPolicy is what the NetworkPolicies of the agent's namespace
// allow.
type AgentNetworkPolicy struct {
	// MonitoringNamespace may reach the agent's metrics port; empty: no
	// namespace may.
	MonitoringNamespace string
	// Egress are the API servers (and proxies) the agent calls, each an
	// address and a TCP port.
	Egress []Endpoint
}

// Endpoint is a TCP destination of the agent.
type Endpoint struct {
	// CIDR is the address as a /32 (IPv4) or /128 (IPv6) block; empty when
	// the destination is a host name, which a NetworkPolicy cannot name: the
	// port is then open to every address.
	CIDR string
	// Port is the TCP port.
	Port int32
}

// EndpointOf returns the Endpoint of an https (or http, for a proxy) URL:
// its host's address, looked up in hostAliases (host name to IP, the
// agent Pod's hosts file) when it is a name, and its port (443, or 80 for
// http, when it has none).
func EndpointOf(rawURL string, hostAliases map[string]string) (Endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Endpoint{}, fmt.Errorf("%q is not a URL with a host", rawURL)
	}
	port := int32(443)
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return Endpoint{}, fmt.Errorf("%q has an invalid port %q", rawURL, p)
		}
		port = int32(n)
	}
	host := u.Hostname()
	if ip, ok := hostAliases[host]; ok {
		host = ip
	}
	return Endpoint{CIDR: HostCIDR(host), Port: port}, nil
}

// HostCIDR returns the one-address block of an IP address (a.b.c.d/32 or
// x::y/128), empty when host is not an IP address.
func HostCIDR(host string) string {
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return ""
	case ip.To4() != nil:
		return ip.To4().String() + "/32"
	}
	return ip.String() + "/128"
}

// AgentNetworkPolicyOf returns what the NetworkPolicies of k's agent allow,
// nil when k's spec.networkPolicyConfiguration is unset: ingress to the
// metrics port from its monitoringNamespace, and egress to the URLs (the
// servers and proxies of the hub kubeconfigs, the managed cluster's API
// server in Hosted mode), their host names looked up in k's
// hubApiServerHostAlias, and to endpoints (addresses known already, such as
// the kubernetes Service's), without duplicates and in a stable order.
func AgentNetworkPolicyOf(k *operatorv1.Klusterlet, urls []string, endpoints []Endpoint) (*AgentNetworkPolicy, error) {
	np := k.Spec.NetworkPolicyConfiguration
	if np == nil {
		return nil, nil
	}
	aliases := map[string]string{}
	if a := k.Spec.HubApiServerHostAlias; a != nil {
		aliases[a.Hostname] = a.IP
	}
	egress := slices.Clone(endpoints)
	for _, u := range urls {
		e, err := EndpointOf(u, aliases)
		if err != nil {
			return nil, fmt.Errorf("the agent's egress: %w", err)
		}
		egress = append(egress, e)
	}
	slices.SortFunc(egress, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(a.CIDR, b.CIDR), cmp.Compare(a.Port, b.Port))
	})
	return &AgentNetworkPolicy{MonitoringNamespace: np.MonitoringNamespace, Egress: slices.Compact(egress)}, nil
}
