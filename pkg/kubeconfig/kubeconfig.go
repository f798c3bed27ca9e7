// Package kubeconfig builds and reads the kubeconfigs that connect a managed
// cluster's agent to its hub: the bootstrap kubeconfig `kubectl ocm join`
// writes (a token) and the hub kubeconfig the agent writes once its client
// certificate is issued (context default-context, user default-auth).
package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// Info is what the agent needs from a kubeconfig: the current context's
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
}

// ForToken returns a kubeconfig for server, trusting caData, that
// authenticates with token: the bootstrap kubeconfig.
func ForToken(server string, caData []byte, token string) ([]byte, error) {
	return write(server, caData, BootstrapContextName, &clientcmdapi.AuthInfo{Token: token}, BootstrapUserName)
}

// ForClientCertificate returns a kubeconfig for server, trusting caData, that
// authenticates with the embedded PEM client certificate and key: the hub
// kubeconfig (context default-context, user default-auth).
func ForClientCertificate(server string, caData, certPEM, keyPEM []byte) ([]byte, error) {
	return write(server, caData, HubContextName, &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM, ClientKeyData: keyPEM,
	}, HubUserName)
}

func write(server string, caData []byte, context string, auth *clientcmdapi.AuthInfo, user string) ([]byte, error) {
	if server == "" {
		return nil, errors.New("kubeconfig needs a server URL")
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[HubClusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos[user] = auth
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: HubClusterName, AuthInfo: user}
	cfg.CurrentContext = context
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return data, nil
}

// Parse reads the current context of a kubeconfig. File references
// (certificate-authority, client-certificate, client-key, tokenFile) are
// rejected: the agent's kubeconfigs live in Secrets and must embed their data.
func Parse(data []byte) (*Info, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("decode kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kubeconfig has no current context (current-context %q)", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok || cluster.Server == "" {
		return nil, fmt.Errorf("kubeconfig context %q names no cluster with a server", cfg.CurrentContext)
	}
	if cluster.CertificateAuthority != "" {
		return nil, errors.New("kubeconfig refers to a CA file; embed certificate-authority-data instead")
	}
	info := &Info{Server: cluster.Server, CAData: cluster.CertificateAuthorityData, ProxyURL: cluster.ProxyURL}
	if auth, ok := cfg.AuthInfos[ctx.AuthInfo]; ok {
		if auth.ClientCertificate != "" || auth.ClientKey != "" || auth.TokenFile != "" {
			return nil, errors.New("kubeconfig refers to credential files; embed the credential data instead")
		}
		info.Token, info.CertData, info.KeyData = auth.Token, auth.ClientCertificateData, auth.ClientKeyData
	}
	return info, nil
}

// RESTConfig returns the client configuration of the kubeconfig's current
// context.
func RESTConfig(data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return cfg, nil
}

// SameHub reports whether two kubeconfigs point at the same hub: the same
// server, proxy and CA bundle.
func SameHub(a, b *Info) bool {
	return a.Server == b.Server && a.ProxyURL == b.ProxyURL && string(a.CAData) == string(b.CAData)
}

// WithProxy returns the kubeconfig data with proxyURL set on the cluster of
// its current context.
func WithProxy(data []byte, proxyURL string) ([]byte, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("decode kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.Clusters[ctx.Cluster] == nil {
		return nil, fmt.Errorf("kubeconfig has no cluster for current context %q", cfg.CurrentContext)
	}
	cfg.Clusters[ctx.Cluster].ProxyURL = proxyURL
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return out, nil
}
