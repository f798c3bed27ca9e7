package csr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Action is what the hub controller does with a request.
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

// Facts are what the hub controller's decision needs to know about the hub.
type Facts struct {
	// ClusterAccepted reports whether the labeled cluster exists and has
	// HubAcceptedManagedCluster True.
	ClusterAccepted bool
	// AcceptedBefore reports whether the labeled cluster was accepted before
	// the request: it exists with spec.hubAcceptsClient set, or with the
	// automatically-accepted-on annotation, unless the auto-approval of this
	// very request accepted it (a retry). A request for such a cluster is no
	// first join.
	AcceptedBefore bool
	// AutoApproveUsers are the bootstrap identities whose first-join requests
	// are approved without an administrator.
	AutoApproveUsers []string
}

// Decide returns what the hub controller does with req and why: renewals by
// the agent's own identity of an accepted cluster are approved (after an
// authorization check), first joins by an auto-approved identity are
// approved (never a request for a cluster accepted before it), everything
// else is left for `kubectl ocm accept`.
func Decide(req Request, facts Facts) (Action, string) {
	if err := Validate(req); err != nil {
		return LeavePending, err.Error()
	}
	if err := CheckRequester(req); err != nil {
		return LeavePending, err.Error()
	}
	if req.Requester == req.CommonName {
		if !facts.ClusterAccepted {
			return LeavePending, fmt.Sprintf("renewal for cluster %s, which the hub has not accepted", req.Cluster)
		}
		return ApproveIfAuthorized, "renewal by the agent's own identity"
	}
	if slices.Contains(facts.AutoApproveUsers, req.Requester) {
		// Auto-approval trusts a bootstrap identity with first joins only:
		// whoever holds the shared bootstrap token would otherwise become
		// the agent of any cluster the hub already accepted.
		if facts.AcceptedBefore {
			return LeavePending, fmt.Sprintf("cluster %s was accepted before this request from %s: auto-approval covers first joins only, so registering an accepted cluster again takes an administrator: `kubectl ocm accept --clusters %s --rejoin`",
				req.Cluster, req.Requester, req.Cluster)
		}
		return Approve, fmt.Sprintf("first join by auto-approved identity %s", req.Requester)
	}
	return LeavePending, fmt.Sprintf("requester %s is neither the agent identity %s nor an auto-approved identity; approve with `kubectl ocm accept --clusters %s`",
		req.Requester, req.CommonName, req.Cluster)
}

// FirstJoinTrust is whom an administrator's approval of a first join trusts.
type FirstJoinTrust struct {
	// Requesters are user names trusted besides the bootstrap identities.
	Requesters []string
	// AnyRequester trusts every requester (the content of the request and
	// CheckRequester still apply).
	AnyRequester bool
}

// DecideFirstJoin reports whether an administrator who accepts req.Cluster
// approves req, and if not, why: the request must pass Validate and
// CheckRequester, and come from a bootstrap identity that may register the
// cluster (the shared bootstrap ServiceAccount, a bootstrap token, or the
// cluster's own cluster-bound bootstrap ServiceAccount) or a requester trust
// names.
func DecideFirstJoin(req Request, trust FirstJoinTrust) (bool, string) {
	if err := Validate(req); err != nil {
		return false, err.Error()
	}
	if err := CheckRequester(req); err != nil {
		return false, err.Error()
	}
	who := identity.Classify(req.Requester)
	// A bootstrap token of another group than the hub's join tokens, such
	// as kubeadm's node bootstrap tokens, is no join token of the hub.
	otherToken := who.Kind == identity.SharedBootstrap && strings.HasPrefix(req.Requester, identity.BootstrapTokenUserPrefix) &&
		!slices.Contains(req.Groups, identity.BootstrapTokenGroup)
	switch {
	case who.Kind == identity.SharedBootstrap && !otherToken, who.Kind == identity.ClusterBootstrap:
		return true, fmt.Sprintf("first join by the %s %s", who.Kind, req.Requester)
	case trust.AnyRequester:
		return true, fmt.Sprintf("first join by %s, approved whatever the requester", req.Requester)
	case slices.Contains(trust.Requesters, req.Requester):
		return true, fmt.Sprintf("first join by listed requester %s", req.Requester)
	case otherToken:
		return false, fmt.Sprintf("bootstrap token %s is not in group %s, the group of the hub's join tokens (a node bootstrap token, say); rerun with --requesters %s to approve it",
			req.Requester, identity.BootstrapTokenGroup, req.Requester)
	}
	return false, fmt.Sprintf("it comes from unexpected requester %s, not a bootstrap identity; rerun with --requesters %s (or --skip-approve-check) to approve it",
		req.Requester, req.Requester)
}
