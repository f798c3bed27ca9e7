package csr

import (
	"fmt"
	"slices"
	"strings"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
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
	// AcceptedBefore reports whether the labeled cluster was accepted
	// before: it exists with spec.hubAcceptsClient set, or with the
	// automatically-accepted-on annotation. A request for such a cluster is
	// no first join, unless it is the request whose first join accepted it
	// (AcceptedFor).
	AcceptedBefore bool
	// AcceptedFor is the metadata.uid of the request whose auto-approved
	// first join accepted the cluster (AutomaticallyAcceptedForAnnotationKey),
	// "" when none: that request, retried, is still the first join.
	AcceptedFor string
	// AgentKey is the pin of the key of the cluster's agent on record
	// (AgentKeyAnnotationKey), "" when none.
	AgentKey string
	// AutoApproveUsers are the bootstrap identities whose first-join requests
	// are approved without an administrator.
	AutoApproveUsers []string
}

// FactsOf returns the Facts that mc, the labeled cluster as stored, tells;
// nil for a cluster that does not exist. AutoApproveUsers are the caller's.
func FactsOf(mc *clusterv1.ManagedCluster) Facts {
	if mc == nil {
		return Facts{}
	}
	_, auto := mc.Annotations[clusterv1.AutomaticallyAcceptedOnAnnotationKey]
	return Facts{
		ClusterAccepted: mc.Spec.HubAcceptsClient && mc.IsAccepted() && mc.DeletionTimestamp.IsZero(),
		AcceptedBefore:  mc.Spec.HubAcceptsClient || auto,
		AcceptedFor:     mc.Annotations[clusterv1.AutomaticallyAcceptedForAnnotationKey],
		AgentKey:        AgentKey(mc),
	}
}

// Decide returns what the hub controller does with req and why: renewals by
// the agent's own identity of an accepted cluster are approved (after an
// authorization check), first joins by an auto-approved identity are
// approved, and so is a new registration of an accepted cluster by such an
// identity with the key of the cluster's agent on record; everything else
// is left for `kubectl ocm accept`.
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
		if facts.AcceptedBefore {
			return decideRegistration(req, facts)
		}
		return Approve, fmt.Sprintf("first join by auto-approved identity %s", req.Requester)
	}
	return LeavePending, fmt.Sprintf("requester %s is neither the agent identity %s nor an auto-approved identity; approve with `kubectl ocm accept --clusters %s`",
		req.Requester, req.CommonName, req.Cluster)
}

// decideRegistration decides on req, a request of an auto-approved identity
// for a cluster accepted before. Auto-approval trusts a bootstrap identity
// with first joins: whoever holds the shared bootstrap token would otherwise
// become the agent of any cluster the hub accepted already. A cluster's
// identity is its agent's key, never a name the requester chooses: the
// request that accepted the cluster, retried, is the one with that UID, and
// the agent that registers again (its credential expired) is the one that
// holds the key on record.
func decideRegistration(req Request, facts Facts) (Action, string) {
	if facts.AcceptedFor != "" && req.RequestUID == facts.AcceptedFor {
		return Approve, fmt.Sprintf("first join by auto-approved identity %s, the request that accepted cluster %s", req.Requester, req.Cluster)
	}
	key := req.Key()
	if key != "" && key == facts.AgentKey {
		if !facts.ClusterAccepted {
			return LeavePending, fmt.Sprintf("cluster %s is not accepted now: its agent (key %s) registers again once an administrator accepts it: `kubectl ocm accept --clusters %s --rejoin`",
				req.Cluster, key, req.Cluster)
		}
		return Approve, fmt.Sprintf("new registration of cluster %s by auto-approved identity %s with the key of its agent on record, %s", req.Cluster, req.Requester, key)
	}
	recorded := facts.AgentKey
	if recorded == "" {
		recorded = "none on record"
	}
	return LeavePending, fmt.Sprintf("cluster %s was accepted before this request from %s, and the request's key %s is not the key of its agent (%s): auto-approval covers first joins and the agent's own key only, so registering the cluster with another key takes an administrator who compares the keys: `kubectl ocm accept --clusters %s --rejoin`",
		req.Cluster, req.Requester, KeyFingerprint(req.PublicKey), recorded, req.Cluster)
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
