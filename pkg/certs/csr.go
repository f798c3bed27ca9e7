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

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// AgentSubject returns the certificate subject of the agent agentID of cluster:
// CN system:open-cluster-management:<cluster>:<agentID>, O
// system:open-cluster-management:<cluster> and
// system:open-cluster-management:managed-clusters.
func AgentSubject(cluster, agentID string) pkix.Name {
	return pkix.Name{
		CommonName:   identity.AgentUserName(cluster, agentID),
		Organization: identity.AgentGroups(cluster),
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

// AddonSubject returns the certificate subject of the agent of addon on
// cluster for one of the add-on's registrations: CN subject.user, O
// subject.groups and OU subject.organizationUnit, or, when subject names no
// user, OCM's default subject (identity.AddonUserName with the add-on's name
// as agent name, in identity.AddonDefaultGroups).
func AddonSubject(cluster, addon string, subject addonv1alpha1.Subject) pkix.Name {
	if subject.User == "" {
		return pkix.Name{
			CommonName:   identity.AddonUserName(cluster, addon, addon),
			Organization: identity.AddonDefaultGroups(cluster, addon),
		}
	}
	return pkix.Name{
		CommonName:         subject.User,
		Organization:       slices.Clone(subject.Groups),
		OrganizationalUnit: slices.Clone(subject.OrganizationUnits),
	}
}

// SubjectEqual reports whether two subjects have the same common name, the
// same organizations and the same organizational units, each in any order.
func SubjectEqual(a, b pkix.Name) bool {
	return a.CommonName == b.CommonName &&
		sameSet(a.Organization, b.Organization) &&
		sameSet(a.OrganizationalUnit, b.OrganizationalUnit)
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	return slices.Equal(sa, sb)
}
