// Package hubtunnel is the contract between the two ends of the hub tunnel:
// the hub's tunnel server (ocm-controller tunnel), which serves the
// aggregated API proxy.kubectl-ocm.io on the hub's API server, and the agent
// of each managed cluster, which attaches a tunnel there and forwards what
// comes back through it to its cluster's API server.
//
// A user reaches a cluster at ProxyPath(cluster) under the hub API server's
// own address with the hub credential they already hold: the hub's API
// server authenticates them and authorizes the request (verbs of
// managedclusters/proxy, resource name the cluster), the hub controller
// checks again and sends the request through the cluster's tunnel, naming
// the user in UserHeader and GroupHeader, and the agent forwards it to its
// API server impersonating MappedUser and MappedGroups of that user, so the
// managed cluster's own RBAC decides what the hub user may do there.
package hubtunnel

import (
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// The aggregated API the hub tunnel serves.
const (
	// Group is the API group.
	Group = "proxy.kubectl-ocm.io"
	// Version is its only version.
	Version = "v1alpha1"
	// GroupVersion is Group/Version.
	GroupVersion = Group + "/" + Version
	// APIServiceName names the APIService that registers the group with the
	// hub's API server.
	APIServiceName = Version + "." + Group
	// Resource is the resource whose subresources the API serves; its names
	// are the ManagedClusters'.
	Resource = "managedclusters"
	// ProxySubresource forwards a request to the cluster's API server.
	ProxySubresource = "proxy"
	// AttachSubresource is where a cluster's agent attaches its tunnel.
	AttachSubresource = "attach"
	// ChunksSubresource is where a cluster's agent reads the payload
	// chunks of a ManifestWorkReplicaSet placed on its cluster, which stay
	// in the set's namespace: ChunkPath.
	ChunksSubresource = "chunks"
)

// APIPath starts every path of the API on the hub's API server:
// /apis/<group>/.
const APIPath = "/apis/" + Group + "/"

// ClusterPath returns the API path of cluster: /apis/<group>/<version>/managedclusters/<cluster>.
func ClusterPath(cluster string) string {
	return APIPath + Version + "/" + Resource + "/" + cluster
}

// ServerURL returns the URL of cluster's proxy on the hub at hubServer:
// the server of a client that reaches cluster's API server through the hub.
func ServerURL(hubServer, cluster string) (string, error) {
	u, err := url.Parse(hubServer)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not a URL such as https://hub.example.com:6443", hubServer)
	}
	path := ProxyPath(cluster)
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + path
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// ProxyPath returns the path under which cluster's API server answers
// through the hub: a kubeconfig whose server is the hub's URL followed by
// this path reaches the cluster.
func ProxyPath(cluster string) string { return ClusterPath(cluster) + "/" + ProxySubresource }

// AttachPath returns the path where cluster's agent attaches its tunnel.
func AttachPath(cluster string) string { return ClusterPath(cluster) + "/" + AttachSubresource }

// ChunkPath returns the path where cluster's agent reads the ManifestChunk
// named chunk (sha256-<hex>) of the payload of its ManifestWork work, which
// a ManifestWorkReplicaSet wrote: managedclusters/<cluster>/chunks/<work>/<chunk>.
// The hub answers only that cluster's agent, and only for a chunk the set
// lists while it places work on the cluster.
func ChunkPath(cluster, work, chunk string) string {
	return ClusterPath(cluster) + "/" + ChunksSubresource + "/" + work + "/" + chunk
}

// ProxyVerb returns the verb of managedclusters/proxy a request with method
// needs, as the API server derives it for a named resource.
func ProxyVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "get"
}

// The identity the hub names to the agent with each request it sends
// through the tunnel. The agent trusts them because they come from the hub
// over the tunnel it opened itself; the hub sets them from the user its API
// server authenticated, and drops any the user sent.
const (
	// UserHeader holds the hub user's name.
	UserHeader = "X-Ocm-Hub-User"
	// GroupHeader holds one of the hub user's groups; repeated.
	GroupHeader = "X-Ocm-Hub-Group"
)

// IdentityPrefix starts every identity the agent impersonates on its
// cluster for a hub user: a hub user can never act on a managed cluster as
// one of the cluster's own users or groups.
const IdentityPrefix = "ocm:hub:"

// MappedUser is the user a request of hub user user runs as on the managed
// cluster: ocm:hub:<user>.
func MappedUser(user string) string { return IdentityPrefix + user }

// MappedGroups are the groups a request of a hub user in groups runs with
// on the managed cluster: ocm:hub:<group> for each. (The managed cluster's
// API server adds system:authenticated, as for every impersonated user.)
func MappedGroups(groups []string) []string {
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		out = append(out, IdentityPrefix+g)
	}
	return out
}

// AgentAddress is the address the hub dials through a tunnel. The agent
// answers nothing else: it is not the API server's address but a name for
// the agent's own forwarder, which reaches the API server with the agent's
// credential.
const AgentAddress = "kube-apiserver:443"

// bearerProtocolPrefix starts the WebSocket subprotocol by which a client
// hands the API server a bearer token (base64url.bearer.authorization.k8s.io.<token>).
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// StripCredentials removes from h every header that carries or claims an
// identity: Authorization, Cookie, the Impersonate-* headers, the front
// proxy's X-Remote-* headers, the tunnel's own identity headers, and the
// bearer-token entries of Sec-WebSocket-Protocol (the other subprotocols
// stay). Both ends call it: the hub before it names the user, the agent
// before it impersonates.
func StripCredentials(h http.Header) {
	for name, values := range h {
		canonical := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case canonical == "Authorization", canonical == "Proxy-Authorization", canonical == "Cookie",
			canonical == textproto.CanonicalMIMEHeaderKey(UserHeader),
			canonical == textproto.CanonicalMIMEHeaderKey(GroupHeader),
			strings.HasPrefix(canonical, "Impersonate-"),
			strings.HasPrefix(canonical, "X-Remote-"):
			delete(h, name)
		case canonical == "Sec-Websocket-Protocol":
			if kept := withoutBearerProtocols(values); len(kept) > 0 {
				h[name] = kept
			} else {
				delete(h, name)
			}
		}
	}
}

// withoutBearerProtocols returns the comma-separated subprotocols of
// values but the bearer-token ones.
func withoutBearerProtocols(values []string) []string {
	var kept []string
	for _, v := range values {
		var protocols []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(strings.ToLower(p), bearerProtocolPrefix) {
				protocols = append(protocols, p)
			}
		}
		if len(protocols) > 0 {
			kept = append(kept, strings.Join(protocols, ", "))
		}
	}
	return kept
}

// The ClusterProfile access provider of the hub tunnel (KEP-5339): each
// exported ClusterProfile's status.accessProviders holds an entry named
// AccessProviderName whose cluster is the tunnel's endpoint for the cluster,
// and a consumer on the hub whose provider file maps that name to the exec
// plugin `kubectl-ocm credentials` reaches the cluster with its own hub
// identity.
const (
	// AccessProviderName names the access provider.
	AccessProviderName = "kubectl-ocm"
	// CredentialsCommand and CredentialsArgs are the exec plugin's command
	// line: kubectl-ocm credentials.
	CredentialsCommand = "kubectl-ocm"
	// ExecAPIVersion is the client.authentication.k8s.io version of the
	// ExecCredential the plugin prints.
	ExecAPIVersion = "client.authentication.k8s.io/v1"
	// ExecExtensionName is the cluster extension client-go hands to an exec
	// plugin with provideClusterInfo as spec.cluster.config.
	ExecExtensionName = "client.authentication.k8s.io/exec"
)

// CredentialsArgs are the exec plugin's arguments.
func CredentialsArgs() []string { return []string{"credentials"} }

// ExecConfig is what the access provider's cluster extension
// ExecExtensionName holds: the cluster the endpoint reaches.
type ExecConfig struct {
	// ClusterName is the managed cluster's name.
	ClusterName string `json:"clusterName"`
}

// The hub tunnel's own Deployment, ServiceAccount and Service (all named
// ServiceName) in the hub's namespace, and the Secret of its serving
// certificate, which the hub controller keeps and the tunnel only reads.
const (
	// ServiceName is the Service the APIService names. It selects the
	// tunnel's Pods: the Deployment runs one replica, because an agent's
	// tunnel ends at the replica its WebSocket reached and a request is
	// sent through the tunnels of the replica it reaches.
	ServiceName = "ocm-hub-tunnel"
	// SecretName is the Secret of the tunnel's serving certificate and its
	// CA, whose bundle the APIService holds.
	SecretName = "ocm-hub-tunnel-serving-cert"
	// Port is the container port the tunnel serves the API on.
	Port = 9443
)

// ServicePortName names the Service's port.
const ServicePortName = "https"

// ServiceHosts are the DNS names of the Service in namespace that the
// tunnel's serving certificate holds.
func ServiceHosts(namespace string) []string {
	return servingcert.ServiceHosts(ServiceName, namespace)
}
