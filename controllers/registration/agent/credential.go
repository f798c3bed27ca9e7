package agent

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
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
// a usable credential of id (kubeconfig.HubCredential.Validate) for the hub
// that the bootstrap kubeconfig names: the kubeconfig's server, proxy and CA
// must be the bootstrap kubeconfig's. The error says what is wrong.
func checkHubCredential(data map[string][]byte, id identity, bootstrap *kubeconfig.Info, now time.Time) (*hubCredential, error) {
	cred, err := kubeconfig.ReadHubCredential(data)
	if err != nil {
		return nil, err
	}
	cert, err := cred.Validate(id.subject(), now)
	if err != nil {
		return nil, err
	}
	if bootstrap != nil && !kubeconfig.SameHub(cred.Kubeconfig, bootstrap) {
		return nil, fmt.Errorf("it points at %s, but the bootstrap kubeconfig points at %s (or another CA or proxy)", cred.Kubeconfig.Server, bootstrap.Server)
	}
	cfg, err := cred.Kubeconfig.RESTConfig()
	if err != nil {
		return nil, err
	}
	return &hubCredential{config: cfg, cert: cert, certPEM: string(cred.CertPEM), hub: cred.Kubeconfig}, nil
}

// hubSecretData returns the data of the hub kubeconfig Secret for id, with
// the issued certificate certPEM and its key keyPEM, for the hub of bootstrap.
func hubSecretData(id identity, bootstrap *kubeconfig.Info, certPEM, keyPEM []byte) (map[string][]byte, error) {
	return kubeconfig.HubCredentialData(bootstrap, id.cluster, id.agentID, certPEM, keyPEM)
}
