package agent

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	ocmidentity "github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// identity is the agent's identity on the hub.
type identity struct {
	cluster, agentID string
}

// subject is the certificate subject of the identity.
func (id identity) subject() pkix.Name { return certs.AgentSubject(id.cluster, id.agentID) }

// hubCredential is a hub credential that passed checkHubCredential: a
// client certificate (cert) or, with the token driver, a ServiceAccount
// token (token).
type hubCredential struct {
	// config is the client configuration of the hub kubeconfig.
	config *rest.Config
	// cert is the leaf client certificate; nil for a token.
	cert *x509.Certificate
	// token is what the token says of itself; nil for a certificate.
	token *kubeconfig.ServiceAccountToken
	// fingerprint is the PEM client certificate or the token and the CAs
	// trusted for the hub, to notice a rotated credential or a change of
	// the hub's CAs (hubtrust.go).
	fingerprint string
	// expires is when the certificate or token expires.
	expires time.Time
	// hub is the hub the kubeconfig points at.
	hub *kubeconfig.Info
}

// checkHubCredential decides whether the data of the hub kubeconfig Secret is
// a usable credential of id (kubeconfig.HubCredential.Validate, or with the
// token driver ValidateToken for the cluster's agent ServiceAccount) for the
// hub that the bootstrap kubeconfig names: the kubeconfig's server, proxy
// and CA must be the bootstrap kubeconfig's. The error says what is wrong.
func checkHubCredential(data map[string][]byte, id identity, tokenAuth bool, bootstrap *kubeconfig.Info, now time.Time) (*hubCredential, error) {
	cred, err := kubeconfig.ReadHubCredential(data)
	if err != nil {
		return nil, err
	}
	out := &hubCredential{hub: cred.Kubeconfig}
	if tokenAuth {
		if cred.AgentName != id.agentID {
			return nil, fmt.Errorf("it is the credential of agent %q, not %q", cred.AgentName, id.agentID)
		}
		ns, name := ocmidentity.AgentTokenNamespace, ocmidentity.AgentTokenServiceAccount(id.cluster)
		// A hub of an earlier release issues tokens of the cluster
		// namespace's ServiceAccount; a hub that moved the token identity
		// deletes that one, and the agent registers again.
		if t, err := kubeconfig.ParseServiceAccountToken([]byte(cred.Kubeconfig.Token)); err == nil &&
			t.Namespace == id.cluster && t.Name == ocmidentity.LegacyAgentServiceAccount {
			ns, name = t.Namespace, t.Name
		}
		t, err := cred.ValidateToken(ns, name, "", now)
		if err != nil {
			return nil, err
		}
		out.token, out.fingerprint, out.expires = t, cred.Kubeconfig.Token+"\n"+string(cred.Kubeconfig.CAData), t.Expiry
	} else {
		cert, err := cred.Validate(id.subject(), now)
		if err != nil {
			return nil, err
		}
		out.cert, out.fingerprint, out.expires = cert, string(cred.CertPEM)+string(cred.Kubeconfig.CAData), cert.NotAfter
	}
	if bootstrap != nil && !kubeconfig.SameHub(cred.Kubeconfig, bootstrap) {
		return nil, fmt.Errorf("it points at %s, but the bootstrap kubeconfig points at %s (or another CA or proxy)", cred.Kubeconfig.Server, bootstrap.Server)
	}
	if out.config, err = cred.Kubeconfig.RESTConfig(); err != nil {
		return nil, err
	}
	return out, nil
}

// hubSecretData returns the data of the hub kubeconfig Secret for id, with
// the issued certificate certPEM and its key keyPEM, for the hub of bootstrap.
func hubSecretData(id identity, bootstrap *kubeconfig.Info, certPEM, keyPEM []byte) (map[string][]byte, error) {
	return kubeconfig.HubCredentialData(bootstrap, id.cluster, id.agentID, certPEM, keyPEM)
}

// hubTokenSecretData returns the data of the hub kubeconfig Secret for id
// with the token driver's token, for the hub of bootstrap.
func hubTokenSecretData(id identity, bootstrap *kubeconfig.Info, token []byte) (map[string][]byte, error) {
	return kubeconfig.TokenCredentialData(bootstrap, id.cluster, id.agentID, token)
}
