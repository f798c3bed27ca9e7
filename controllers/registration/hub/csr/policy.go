package csr

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// Identity strings of managed cluster agents.
const (
	// agentPrefix starts the group and user names of cluster agents.
	agentPrefix = "system:open-cluster-management:"
	// ManagedClustersGroup is the group every agent certificate carries.
	ManagedClustersGroup = agentPrefix + "managed-clusters"
)

// Action is what the controller does with a request.
type Action int

const (
	// LeavePending leaves the request for an administrator.
	LeavePending Action = iota
	// ApproveIfAuthorized approves a renewal once a SubjectAccessReview for
	// the requester on managedclusters/clientcertificates verb renew passes.
	ApproveIfAuthorized
	// Approve approves a first-join request from an auto-approved identity.
	Approve
)

// String names the action in logs.
func (a Action) String() string {
	return [...]string{"LeavePending", "ApproveIfAuthorized", "Approve"}[a]
}

// Request is what the policy looks at in one CertificateSigningRequest.
type Request struct {
	// Cluster is the value of the open-cluster-management.io/cluster-name label.
	Cluster string
	// Requester is spec.username, set by the API server from the creator's
	// credentials.
	Requester string
	// SignerName is spec.signerName.
	SignerName string
	// Usages are spec.usages.
	Usages []certificatesv1.KeyUsage
	// CommonName and Organizations are the requested certificate subject.
	CommonName    string
	Organizations []string
}

// Facts are what the policy needs to know about the hub.
type Facts struct {
	// ClusterAccepted reports whether the labeled cluster exists and has
	// HubAcceptedManagedCluster True.
	ClusterAccepted bool
	// AutoApproveUsers are the bootstrap identities whose first-join requests
	// are approved without an administrator.
	AutoApproveUsers []string
}

// allowedUsages are the key usages an agent certificate may request.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
}

// Decide returns what to do with req and why.
func Decide(req Request, facts Facts) (Action, string) {
	if err := validSubject(req); err != nil {
		return LeavePending, err.Error()
	}
	if req.Requester == req.CommonName {
		if !facts.ClusterAccepted {
			return LeavePending, fmt.Sprintf("renewal for cluster %s, which the hub has not accepted", req.Cluster)
		}
		return ApproveIfAuthorized, "renewal by the agent's own identity"
	}
	if slices.Contains(facts.AutoApproveUsers, req.Requester) {
		return Approve, fmt.Sprintf("first join by auto-approved identity %s", req.Requester)
	}
	return LeavePending, fmt.Sprintf("requester %s is neither the agent identity %s nor an auto-approved identity; approve with `kubectl ocm accept --clusters %s`",
		req.Requester, req.CommonName, req.Cluster)
}

// validSubject checks that req is an agent certificate request for the
// cluster its label names: signer, usages, common name
// system:open-cluster-management:<cluster>:<agent> and organizations exactly
// system:open-cluster-management:<cluster> (plus, optionally, the
// managed-clusters group).
func validSubject(req Request) error {
	if req.Cluster == "" {
		return fmt.Errorf("no %s label", clusterv1.ClusterNameLabelKey)
	}
	if req.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return fmt.Errorf("signer %s is not %s", req.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	for _, u := range req.Usages {
		if !slices.Contains(allowedUsages, u) {
			return fmt.Errorf("usage %q is not allowed for an agent certificate", u)
		}
	}
	prefix := agentPrefix + req.Cluster + ":"
	agent, ok := strings.CutPrefix(req.CommonName, prefix)
	if !ok || agent == "" || strings.Contains(agent, ":") {
		return fmt.Errorf("common name %q is not %s<agent-id> for the labeled cluster %s", req.CommonName, prefix, req.Cluster)
	}
	orgs := slices.Clone(req.Organizations)
	slices.Sort(orgs)
	want := agentPrefix + req.Cluster
	withGroup := []string{want, ManagedClustersGroup}
	slices.Sort(withGroup)
	if !slices.Equal(orgs, []string{want}) && !slices.Equal(orgs, withGroup) {
		return fmt.Errorf("organizations %v are not {%s} (optionally with %s)", req.Organizations, want, ManagedClustersGroup)
	}
	return nil
}

// ParseRequest extracts the policy's view of csr.
func ParseRequest(csr *certificatesv1.CertificateSigningRequest) (Request, error) {
	req := Request{
		Cluster:    csr.Labels[clusterv1.ClusterNameLabelKey],
		Requester:  csr.Spec.Username,
		SignerName: csr.Spec.SignerName,
		Usages:     csr.Spec.Usages,
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return req, errors.New("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	x, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return req, fmt.Errorf("parse spec.request: %w", err)
	}
	req.CommonName = x.Subject.CommonName
	req.Organizations = x.Subject.Organization
	return req, nil
}
