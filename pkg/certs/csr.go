package certs

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// AgentSubject returns the certificate subject of the agent agentID of cluster:
// CN system:open-cluster-management:<cluster>:<agentID>, O
// system:open-cluster-management:<cluster> and
// system:open-cluster-management:managed-clusters.
func AgentSubject(cluster, agentID string) pkix.Name {
	return pkix.Name{
		CommonName:   identity.AgentUserName(cluster, agentID),
		Organization: []string{identity.ClusterGroup(cluster), identity.ManagedClustersGroup},
	}
}

// ParseCSR decodes a PEM-encoded certificate request, as made by
// k8s.io/client-go/util/cert.MakeCSR.
func ParseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != certutil.CertificateRequestBlockType {
		return nil, errors.New("no PEM certificate request found")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("decode certificate request: %w", err)
	}
	return csr, nil
}

// CSRMatches reports whether the PEM certificate request data was made with
// key for subject, so that an agent can reuse a pending request after a restart.
func CSRMatches(data []byte, key crypto.Signer, subject pkix.Name) bool {
	csr, err := ParseCSR(data)
	if err != nil {
		return false
	}
	return publicKeyEqual(key.Public(), csr.PublicKey) && SubjectEqual(csr.Subject, subject)
}

// SubjectEqual reports whether two subjects have the same common name and the
// same organizations, in any order.
func SubjectEqual(a, b pkix.Name) bool {
	if a.CommonName != b.CommonName {
		return false
	}
	oa, ob := slices.Clone(a.Organization), slices.Clone(b.Organization)
	slices.Sort(oa)
	slices.Sort(ob)
	return slices.Equal(oa, ob)
}
