// Package kubeconfig builds and reads the kubeconfigs that connect an agent
// to its hub and, in Hosted mode, to its managed cluster, and the Secrets
// that hold them: the bootstrap kubeconfig `kubectl ocm join` writes (a
// token), the hub-credential Secret an agent writes once its client
// certificate is issued (kubeconfig, tls.crt, tls.key, cluster-name,
// agent-name; context default-context, user default-auth, as OCM writes
// it), and the managed cluster's kubeconfig of a hosted agent.
//
// Every kubeconfig stored in a Secret is read by one rule (see FromSecret):
// it may name files only by keys of that same Secret.
package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// Names inside the kubeconfigs, as OCM writes them.
const (
	// HubClusterName names the hub cluster entry of both kubeconfigs.
	HubClusterName = "hub"
	// HubContextName is the context of the hub kubeconfig.
	HubContextName = "default-context"
	// HubUserName is the user of the hub kubeconfig.
	HubUserName = "default-auth"
	// BootstrapContextName is the context of the bootstrap kubeconfig.
	BootstrapContextName = "bootstrap"
	// BootstrapUserName is the user of the bootstrap kubeconfig.
	BootstrapUserName = "bootstrap"
)

// Info is what an agent needs from a kubeconfig: the current context's
// server, CA and credentials.
type Info struct {
	// Server is the API server URL.
	Server string
	// CAData is the PEM CA bundle that verifies the server.
	CAData []byte
	// ProxyURL is the proxy the client goes through, if any.
	ProxyURL string
	// Token is the bearer token, if any.
	Token string
	// CertData and KeyData are the PEM client certificate and key, if any.
	CertData, KeyData []byte

	// config is the parsed kubeconfig reduced to its current context, with
	// every file it named embedded; nil for an Info built by hand.
	config *clientcmdapi.Config
}

// RESTConfig returns the client configuration of the kubeconfig's current
// context, or, for an Info built by hand, of its fields.
func (i *Info) RESTConfig() (*rest.Config, error) {
	kc := i.config
	if kc == nil {
		kc = newConfig(i.Server, i.CAData, i.ProxyURL, HubContextName, &clientcmdapi.AuthInfo{
			Token: i.Token, ClientCertificateData: i.CertData, ClientKeyData: i.KeyData,
		}, HubUserName)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig is not usable: %w", err)
	}
	return cfg, nil
}

// ForToken returns a kubeconfig for server, trusting caData, that
// authenticates with token: the bootstrap kubeconfig.
func ForToken(server string, caData []byte, token string) ([]byte, error) {
	return ForTokenVia(server, caData, "", token)
}

// ForTokenVia is ForToken for a client that reaches server through the
// HTTP(S) proxy proxyURL (none when empty), recorded as the cluster's
// proxy-url. The agent keeps the proxy, and the CA bundle, in every hub
// kubeconfig it writes after this one.
func ForTokenVia(server string, caData []byte, proxyURL, token string) ([]byte, error) {
	return write(server, caData, proxyURL, BootstrapContextName, &clientcmdapi.AuthInfo{Token: token}, BootstrapUserName)
}

// forClientCertificate returns a kubeconfig for the server, CA and proxy of
// hub that authenticates with the embedded PEM client certificate and key:
// the hub kubeconfig (context default-context, user default-auth).
func forClientCertificate(hub *Info, certPEM, keyPEM []byte) ([]byte, error) {
	return write(hub.Server, hub.CAData, hub.ProxyURL, HubContextName, &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM, ClientKeyData: keyPEM,
	}, HubUserName)
}

// write encodes the one-context kubeconfig of newConfig.
func write(server string, caData []byte, proxyURL, context string, auth *clientcmdapi.AuthInfo, user string) ([]byte, error) {
	if server == "" {
		return nil, errors.New("kubeconfig needs a server URL")
	}
	data, err := clientcmd.Write(*newConfig(server, caData, proxyURL, context, auth, user))
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return data, nil
}

// newConfig returns a kubeconfig whose current context, named context, joins
// the cluster HubClusterName at server to the user named user.
func newConfig(server string, caData []byte, proxyURL, context string, auth *clientcmdapi.AuthInfo, user string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[HubClusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData, ProxyURL: proxyURL}
	cfg.AuthInfos[user] = auth
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: HubClusterName, AuthInfo: user}
	cfg.CurrentContext = context
	return cfg
}

// SameHub reports whether two kubeconfigs point at the same hub: the same
// server and proxy, and CA bundles that are equal or share a CA. An agent's
// hub kubeconfig follows the hub's CA rotations (certs.UpdateTrust) one step
// at a time, first trusting the old and the new CA, then the new one only,
// so each step shares a CA with the one before; a hub recreated at the same
// address has a CA of its own.
func SameHub(a, b *Info) bool {
	if a.Server != b.Server || a.ProxyURL != b.ProxyURL {
		return false
	}
	return string(a.CAData) == string(b.CAData) || certs.BundlesShareCA(a.CAData, b.CAData)
}

// HubIndex returns the index of the first of candidates (bootstrap
// kubeconfigs, nil for one that cannot be read) that points at the same hub
// as hub (SameHub), or -1: which of an agent's hubs its hub kubeconfig is
// for.
func HubIndex(hub *Info, candidates []*Info) int {
	for i, c := range candidates {
		if hub != nil && c != nil && SameHub(hub, c) {
			return i
		}
	}
	return -1
}
