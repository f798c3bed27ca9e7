package csr

import (
	"crypto/x509/pkix"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// IsAddonRequest reports whether csr is an add-on agent's request: it
// carries the open-cluster-management.io/addon-name label. The cluster
// approver leaves such requests to the add-on approver.
func IsAddonRequest(csr *certificatesv1.CertificateSigningRequest) bool {
	_, ok := csr.Labels[addonv1alpha1.AddonLabelKey]
	return ok
}

// ValidateAddon checks that req is an add-on agent's request for a client
// certificate the hub may approve, by its signer.
//
// For the kube-apiserver-client signer it must be within the identities of
// its labeled add-on on its labeled cluster: both labels; the signer,
// usages, key and signature rules of an agent certificate (Validate); a
// common name
// system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>;
// organizations among the add-on's groups on that cluster and on every
// cluster and system:authenticated. A registration whose subject lies
// outside these identities is left to the add-on's own approver: the hub
// never issues, on the word of a ManagedClusterAddOn's status, a
// certificate for another add-on, another cluster or any other user.
//
// For a custom signer (registration.IsCustomSigner) the subject is the one
// the add-on's AddOnTemplate names, which DecideAddon compares; the labels,
// usages, key and signature rules are the same. Other kubernetes.io/
// signers are never approved.
func ValidateAddon(req Request) error {
	if req.Cluster == "" {
		return fmt.Errorf("no %s label", clusterv1.ClusterNameLabelKey)
	}
	if req.Addon == "" {
		return fmt.Errorf("no %s label", addonv1alpha1.AddonLabelKey)
	}
	if req.SignerName == certs.AgentTokenSignerName {
		return fmt.Errorf("signer %s is the cluster agents' token driver, not an add-on signer", req.SignerName)
	}
	if registration.IsCustomSigner(req.SignerName) {
		if err := validUsages(req); err != nil {
			return err
		}
		return validKeyAndSignature(req)
	}
	if err := validSignerAndUsages(req); err != nil {
		return err
	}
	prefix := identity.AddonUserName(req.Cluster, req.Addon, "")
	if agent, ok := strings.CutPrefix(req.CommonName, prefix); !ok || agent == "" {
		return fmt.Errorf("common name %q is not %s<agent> for add-on %s of the labeled cluster %s", req.CommonName, prefix, req.Addon, req.Cluster)
	}
	allowed := identity.AddonDefaultGroups(req.Cluster, req.Addon)
	for _, o := range req.Organizations {
		if !slices.Contains(allowed, o) {
			return fmt.Errorf("organization %q is not one of the groups of add-on %s on cluster %s %v", o, req.Addon, req.Cluster, allowed)
		}
	}
	return validKeyAndSignature(req)
}

// AddonFacts are what the add-on approver knows about the hub for one
// request.
type AddonFacts struct {
	// ClusterAccepted reports whether the labeled cluster exists and has
	// HubAcceptedManagedCluster True.
	ClusterAccepted bool
	// AddonExists reports whether the ManagedClusterAddOn named by the
	// add-on label exists in the labeled cluster's namespace.
	AddonExists bool
	// Subjects are the certificate subjects of that ManagedClusterAddOn's
	// registrations with the request's signer (RegistrationSubjects).
	Subjects []pkix.Name
	// SignedSubjects, for a custom signer only, are the subjects the hub
	// signs for that signer: those of the registrations of the add-on's
	// AddOnTemplate that name the signer and its signingCA, computed from
	// the template and never read from the status. Empty when no template
	// registration names the signer: the hub leaves the request to the
	// add-on's own signer.
	SignedSubjects []pkix.Name
}

// RegistrationSubjects returns the certificate subjects of the
// registrations of the add-on addon on cluster (status.registrations) with
// signer, defaults filled in (certs.AddonSubject).
func RegistrationSubjects(cluster, addon, signer string, regs []addonv1alpha1.RegistrationConfig) []pkix.Name {
	var out []pkix.Name
	for _, r := range regs {
		if r.SignerName == signer {
			out = append(out, certs.AddonSubject(cluster, addon, r.Subject))
		}
	}
	return out
}

// DecideAddon reports whether the hub approves the add-on request req, and
// why: it must pass ValidateAddon, come from the agent identity of the
// labeled cluster (the registration agent files add-on requests with the
// cluster's own credential), the cluster must be accepted, the
// ManagedClusterAddOn of the labeled add-on must exist in the cluster's
// namespace, and the requested subject must equal the subject of one of its
// registrations with the request's signer. For a custom signer the subject
// must also be one the hub signs for it (AddonFacts.SignedSubjects).
func DecideAddon(req Request, facts AddonFacts) (bool, string) {
	if err := ValidateAddon(req); err != nil {
		return false, err.Error()
	}
	if who := identity.Classify(req.Requester); who.Kind != identity.Agent || who.Cluster != req.Cluster {
		return false, fmt.Sprintf("requester %s is not an agent identity of cluster %s", req.Requester, req.Cluster)
	}
	if !facts.ClusterAccepted {
		return false, fmt.Sprintf("cluster %s is not accepted by the hub", req.Cluster)
	}
	if !facts.AddonExists {
		return false, fmt.Sprintf("ManagedClusterAddOn %s does not exist in namespace %s", req.Addon, req.Cluster)
	}
	subject := pkix.Name{CommonName: req.CommonName, Organization: req.Organizations, OrganizationalUnit: req.OrganizationalUnits}
	equal := func(s pkix.Name) bool { return certs.SubjectEqual(s, subject) }
	if !slices.ContainsFunc(facts.Subjects, equal) {
		return false, fmt.Sprintf("subject %q (groups %v) is not the subject of a registration of ManagedClusterAddOn %s/%s with signer %s",
			req.CommonName, req.Organizations, req.Cluster, req.Addon, req.SignerName)
	}
	if registration.IsCustomSigner(req.SignerName) {
		if len(facts.SignedSubjects) == 0 {
			return false, fmt.Sprintf("no registration of the AddOnTemplate of add-on %s names signer %s with a signingCA, so the hub does not sign it; the add-on's own signer may",
				req.Addon, req.SignerName)
		}
		if !slices.ContainsFunc(facts.SignedSubjects, equal) {
			return false, fmt.Sprintf("subject %q (groups %v) is not the subject the AddOnTemplate of add-on %s names for signer %s",
				req.CommonName, req.Organizations, req.Addon, req.SignerName)
		}
	}
	return true, fmt.Sprintf("registration of add-on %s on cluster %s with signer %s, requested by its agent %s", req.Addon, req.Cluster, req.SignerName, req.Requester)
}
