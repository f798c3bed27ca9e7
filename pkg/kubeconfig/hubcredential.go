package kubeconfig

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// HubCredential is the content of a hub-credential Secret: a client
// certificate issued to an agent identity on the hub and the kubeconfig that
// connects with it. The registration agent's Secret hub-kubeconfig-secret
// holds one for the cluster's agent identity (HubCredentialData); an add-on
// agent's Secret <addon>-hub-kubeconfig holds one for the add-on's identity
// (AddonCredentialData). The Secret's keys are KubeconfigKey, TLSCertKey,
// TLSKeyKey, ClusterNameKey and AgentNameKey, and for an add-on AddonNameKey.
type HubCredential struct {
	// Kubeconfig is the Secret's kubeconfig: the hub's server, CA and proxy
	// and the credential it authenticates with. Kubeconfig.RESTConfig()
	// connects to the hub.
	Kubeconfig *Info
	// CertPEM and KeyPEM are the PEM client certificate and private key
	// (keys tls.crt and tls.key); empty when the Secret lacks them.
	CertPEM, KeyPEM []byte
	// ClusterName is the managed cluster's name (key cluster-name), empty
	// when the Secret lacks it.
	ClusterName string
	// AgentName is the agent ID (key agent-name), empty when the Secret
	// lacks it.
	AgentName string
}

// HubCredentialData returns the data of a hub-credential Secret for the
// agent agentName of cluster clusterName: the PEM client certificate and key
// issued to it, and a kubeconfig for the server, CA and proxy of hub (the
// bootstrap kubeconfig) with that certificate and key embedded.
func HubCredentialData(hub *Info, clusterName, agentName string, certPEM, keyPEM []byte) (map[string][]byte, error) {
	kc, err := forClientCertificate(hub, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		KubeconfigKey:  kc,
		TLSCertKey:     certPEM,
		TLSKeyKey:      keyPEM,
		ClusterNameKey: []byte(clusterName),
		AgentNameKey:   []byte(agentName),
	}, nil
}

// AddonCredentialData returns the data of the hub-credential Secret
// <addon>-hub-kubeconfig of the agent of addon on cluster: that of
// HubCredentialData, with the add-on's name as agent name (OCM names an
// add-on's agent after the add-on), and the add-on's name under
// AddonNameKey.
func AddonCredentialData(hub *Info, cluster, addon string, certPEM, keyPEM []byte) (map[string][]byte, error) {
	data, err := HubCredentialData(hub, cluster, addon, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	data[AddonNameKey] = []byte(addon)
	return data, nil
}

// PendingRequestData returns the data of the Secret that keeps the pending
// request p of the agent agentName of cluster: its private key under
// TLSKeyKey, the request's name under CSRNameKey once filed, and
// ClusterNameKey and AgentNameKey, so that a request kept for another
// identity is never reused. A nil p keeps only the identity.
func PendingRequestData(cluster, agentName string, p *certs.PendingRequest) map[string][]byte {
	data := map[string][]byte{ClusterNameKey: []byte(cluster), AgentNameKey: []byte(agentName)}
	if p != nil {
		data[TLSKeyKey] = p.KeyPEM
		if p.CSRName != "" {
			data[CSRNameKey] = []byte(p.CSRName)
		}
	}
	return data
}

// ReadPendingRequest reads the pending request of the agent agentName of
// cluster from data, written by PendingRequestData. It returns nil when data
// is nil, was kept for another identity or holds no usable key: the caller
// then starts over with certs.NewPendingRequest.
func ReadPendingRequest(data map[string][]byte, cluster, agentName string) *certs.PendingRequest {
	if data == nil || string(data[ClusterNameKey]) != cluster || string(data[AgentNameKey]) != agentName {
		return nil
	}
	key, err := certs.ParsePrivateKey(data[TLSKeyKey])
	if err != nil {
		return nil
	}
	return &certs.PendingRequest{KeyPEM: data[TLSKeyKey], Key: key, CSRName: string(data[CSRNameKey])}
}

// ReadHubCredential reads the data of a hub-credential Secret. It needs a
// usable kubeconfig, read by the rule of FromSecret, so that an OCM agent's
// Secret, whose kubeconfig names tls.crt and tls.key by file, is read too;
// the other keys may be missing. The error names the key at fault and
// leaves naming the Secret to the caller. Validate checks the certificate.
func ReadHubCredential(data map[string][]byte) (*HubCredential, error) {
	kc, err := FromSecret(data)
	if err != nil {
		return nil, err
	}
	return &HubCredential{
		Kubeconfig:  kc,
		CertPEM:     data[TLSCertKey],
		KeyPEM:      data[TLSKeyKey],
		ClusterName: string(data[ClusterNameKey]),
		AgentName:   string(data[AgentNameKey]),
	}, nil
}

// Validate checks that c is a usable client credential for subject at now:
// tls.crt and tls.key are present, the certificate is valid at now, matches
// the key and names subject, and the kubeconfig authenticates with that
// certificate and key. It returns the leaf certificate.
func (c *HubCredential) Validate(subject pkix.Name, now time.Time) (*x509.Certificate, error) {
	if len(c.CertPEM) == 0 {
		return nil, fmt.Errorf("key %s is missing", TLSCertKey)
	}
	if len(c.KeyPEM) == 0 {
		return nil, fmt.Errorf("key %s is missing", TLSKeyKey)
	}
	cert, err := certs.ValidateClientCertificate(c.CertPEM, c.KeyPEM, subject, now)
	if err != nil {
		return nil, err
	}
	if string(c.Kubeconfig.CertData) != string(c.CertPEM) || string(c.Kubeconfig.KeyData) != string(c.KeyPEM) {
		return nil, errors.New("its kubeconfig does not authenticate with the certificate and key of tls.crt and tls.key")
	}
	return cert, nil
}
