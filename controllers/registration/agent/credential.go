package agent

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// Keys of the hub kubeconfig Secret (OCM's) and of the pending-request Secret.
const (
	// KubeconfigKey holds a kubeconfig, in both the bootstrap and the hub Secret.
	KubeconfigKey = "kubeconfig"
	// TLSCertKey holds the PEM client certificate.
	TLSCertKey = "tls.crt"
	// TLSKeyKey holds the PEM private key.
	TLSKeyKey = "tls.key"
	// ClusterNameKey holds the managed cluster's name.
	ClusterNameKey = "cluster-name"
	// AgentNameKey holds the agent ID.
	AgentNameKey = "agent-name"
	// CSRNameKey holds the name of the pending CertificateSigningRequest.
	CSRNameKey = "csr-name"
)

// identity is the agent's identity on the hub.
type identity struct {
	cluster, agentID string
}

// subject is the certificate subject of the identity.
func (id identity) subject() pkix.Name { return certs.AgentSubject(id.cluster, id.agentID) }

// hubCredential is a hub credential that passed checkHubCredential.
type hubCredential struct {
	// config is the client configuration of the hub kubeconfig.
	config *rest.Config
	// cert is the leaf client certificate.
	cert *x509.Certificate
	// certPEM is the PEM client certificate, to notice a rotated credential.
	certPEM string
	// hub is the hub the kubeconfig points at.
	hub *kubeconfig.Info
}

// checkHubCredential decides whether the data of the hub kubeconfig Secret is
// a usable credential of id for the hub that the bootstrap kubeconfig names:
// it needs tls.crt, tls.key and kubeconfig; the certificate must be unexpired,
// match the key and name id; the kubeconfig's server, proxy and CA must be the
// bootstrap kubeconfig's. The error says what is wrong.
func checkHubCredential(data map[string][]byte, id identity, bootstrap *kubeconfig.Info, now time.Time) (*hubCredential, error) {
	for _, key := range []string{KubeconfigKey, TLSCertKey, TLSKeyKey} {
		if len(data[key]) == 0 {
			return nil, fmt.Errorf("key %s is missing", key)
		}
	}
	cert, err := certs.ValidateClientCertificate(data[TLSCertKey], data[TLSKeyKey], id.subject(), now)
	if err != nil {
		return nil, err
	}
	info, err := kubeconfig.Parse(data[KubeconfigKey])
	if err != nil {
		return nil, err
	}
	if bootstrap != nil && !kubeconfig.SameHub(info, bootstrap) {
		return nil, fmt.Errorf("it points at %s, but the bootstrap kubeconfig points at %s (or another CA or proxy)", info.Server, bootstrap.Server)
	}
	if string(info.CertData) != string(data[TLSCertKey]) || string(info.KeyData) != string(data[TLSKeyKey]) {
		return nil, errors.New("its kubeconfig does not hold the certificate and key of tls.crt and tls.key")
	}
	cfg, err := kubeconfig.RESTConfig(data[KubeconfigKey])
	if err != nil {
		return nil, err
	}
	return &hubCredential{config: cfg, cert: cert, certPEM: string(data[TLSCertKey]), hub: info}, nil
}

// hubSecretData returns the data of the hub kubeconfig Secret for id, with
// the issued certificate certPEM and its key keyPEM, for the hub of bootstrap.
func hubSecretData(id identity, bootstrap *kubeconfig.Info, certPEM, keyPEM []byte) (map[string][]byte, error) {
	kc, err := kubeconfig.ForClientCertificate(bootstrap.Server, bootstrap.CAData, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if bootstrap.ProxyURL != "" {
		// Keep the proxy: the hub is only reachable through it.
		if kc, err = kubeconfig.WithProxy(kc, bootstrap.ProxyURL); err != nil {
			return nil, err
		}
	}
	return map[string][]byte{
		KubeconfigKey:  kc,
		TLSCertKey:     certPEM,
		TLSKeyKey:      keyPEM,
		ClusterNameKey: []byte(id.cluster),
		AgentNameKey:   []byte(id.agentID),
	}, nil
}
