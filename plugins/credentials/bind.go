package credentials

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// hubOf is the hub a credential belongs to: the server the credential's
// own kubeconfig names, or the API server a Pod reaches in-cluster.
type hubOf struct {
	// url is the hub's URL: scheme, host and any path before the API;
	// nil when unknown, and then why says why.
	url *url.URL
	why string
	// insecure is set when the credential's own kubeconfig already skips
	// verifying the hub's certificate.
	insecure bool
	// what names where the credential comes from, in messages.
	what string
}

// kubeconfigHub is the hub of cfg, a kubeconfig's configuration.
func kubeconfigHub(cfg *rest.Config) hubOf {
	h := hubOf{insecure: cfg.Insecure, what: "your kubeconfig's user"}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		h.why = fmt.Sprintf("its server %q is not a URL: %v", cfg.Host, err)
		return h
	}
	h.url = u
	return h
}

// inClusterHub is the hub of the ServiceAccount token of the Pod the
// plugin runs in: the API server client-go's in-cluster configuration
// reaches, from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT.
func inClusterHub(getenv func(string) string) hubOf {
	h := hubOf{what: "the Pod's ServiceAccount token"}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		h.why = "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, which name the API server of a Pod's own cluster, are not both set"
		return h
	}
	h.url = &url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}
	return h
}

// checkServer fails unless the plugin may print the credential of hub
// for the server that client-go asks it for: run by hand (no
// KUBERNETES_EXEC_INFO), always; under client-go, only with the server
// named (provideClusterInfo) and served by hub (servedBy).
func (o *Options) checkServer(hub hubOf) error {
	if o.ExecInfo == "" {
		return nil
	}
	if o.cluster == nil {
		return fmt.Errorf("%s names no server, so kubectl-ocm credentials cannot tell whether the hub credential (%s) would go to its own hub: set provideClusterInfo: true in the exec section that runs it (kubectl config set-credentials NAME --exec-provide-cluster-info=true, or \"provideClusterInfo\": true in a ClusterProfile provider file's execConfig)",
			ExecInfoEnv, hub.what)
	}
	return servedBy(o.cluster, hub)
}

// servedBy fails, naming the server, the hub and the fix, unless cluster
// (an ExecCredential's spec.cluster) is an endpoint of the hub tunnel on
// hub: the same scheme, host and port as hub's URL (the default port of
// the scheme when none is given), a path under hub's path followed by
// hubtunnel.APIPath without "." or ".." segments, no query, and the hub's
// certificate verified unless hub's own kubeconfig does not verify it.
func servedBy(cluster *clientauthv1.Cluster, hub hubOf) error {
	if hub.url == nil {
		return fmt.Errorf("kubectl-ocm credentials was asked for a credential for server %q but cannot tell which hub the hub credential (%s) is for: %s; run it with a kubeconfig of that hub (KUBECONFIG, --kubeconfig, --context)",
			cluster.Server, hub.what, hub.why)
	}
	base := strings.TrimSuffix(hub.url.Path, "/")
	hubURL := schemeHost(hub.url) + base
	refuse := fmt.Sprintf("refusing to hand the credential for hub %s (%s) to server %q", hubURL, hub.what, cluster.Server)
	server, err := parseServer(cluster.Server)
	if err != nil {
		return fmt.Errorf("%s: %v; fix the server of the kubeconfig or ClusterProfile that names it", refuse, err)
	}
	if schemeHost(server) != schemeHost(hub.url) {
		return fmt.Errorf("%s: it is not that hub. If %s is that hub under another address, run the plugin with a hub kubeconfig whose server is %s (KUBECONFIG, --kubeconfig or --context in the exec section); "+
			"otherwise the kubeconfig or ClusterProfile that names it is not one of that hub's clusters, and its exec section must not run kubectl-ocm credentials",
			refuse, schemeHost(server), schemeHost(server))
	}
	if err := tunnelPath(server, base); err != nil {
		return fmt.Errorf("%s: %v: the credential goes only to its hub's cluster proxy, %s%s; fix the server of the kubeconfig or ClusterProfile that names it",
			refuse, err, hubURL, hubtunnel.ProxyPath("CLUSTER"))
	}
	if cluster.InsecureSkipTLSVerify && !hub.insecure {
		return fmt.Errorf("%s with insecure-skip-tls-verify: anyone between could take the credential; remove insecure-skip-tls-verify and give the hub's CA (certificate-authority-data)", refuse)
	}
	return nil
}

// parseServer parses a kubeconfig's server, https when it has no scheme
// (as client-go takes it).
func parseServer(server string) (*url.URL, error) {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("it is not a URL: %w", err)
	}
	if u.Host == "" {
		return nil, errors.New("it names no host")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

// schemeHost returns scheme://host:port of u, the host in lower case and
// the port explicit (443 for https, 80 for http).
func schemeHost(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// tunnelPath fails unless server's path is under base followed by
// hubtunnel.APIPath, with no "." or ".." segment (which would leave it),
// and server has no user, query or fragment.
func tunnelPath(server *url.URL, base string) error {
	if server.User != nil || server.RawQuery != "" || server.Fragment != "" || server.ForceQuery {
		return errors.New("it carries a user, query or fragment")
	}
	if !strings.HasPrefix(server.Path, base+hubtunnel.APIPath) {
		return fmt.Errorf("its path %q is not under %s", server.Path, base+hubtunnel.APIPath)
	}
	for _, seg := range strings.Split(server.Path, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("its path %q has a %q segment", server.Path, seg)
		}
	}
	return nil
}
