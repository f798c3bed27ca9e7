package identity

import (
	"slices"
	"strings"
)

// The rules below decide, from a request's user name and groups alone, which
// registration identity made it. Admission policies need the same decision
// in CEL; the CEL constants are the same rule, tested for parity with the Go
// functions (rule_test.go) over every subject the certificate policy
// approves. Each rule keys on a prefix the hub alone hands out: a user name
// or group it signs into an agent's certificate, or a ServiceAccount of a
// namespace only the hub controller administers. None keys on a group that
// a certificate request may leave out.

// ClusterRBACPrefix starts the name of every ClusterRole and
// ClusterRoleBinding the hub creates for a cluster's agent
// (open-cluster-management:managedcluster:<cluster>), and of the shared
// agent roles it binds in cluster namespaces. The hub controller's own RBAC
// writes are held to these names by admission.
const ClusterRBACPrefix = "open-cluster-management:managedcluster:"

// IsAgentSubject reports whether an RBAC subject the hub controller binds
// names an identity issued to managed clusters: a group under Prefix, a
// ServiceAccount of AgentTokenNamespace, or an add-on agent's token
// ServiceAccount (AddonServiceAccount, <addon>-agent).
func IsAgentSubject(kind, namespace, name string) bool {
	switch kind {
	case "Group":
		return strings.HasPrefix(name, Prefix)
	case "ServiceAccount":
		return namespace == AgentTokenNamespace || strings.HasSuffix(name, addonServiceAccountSuffix)
	}
	return false
}

// AgentSubjectCEL is IsAgentSubject for a subject s in CEL.
const AgentSubjectCEL = "(s.kind == 'Group' && s.name.startsWith('" + Prefix + "')) || " +
	"(s.kind == 'ServiceAccount' && (s.?namespace.orValue('') == '" + AgentTokenNamespace + "' || s.name.endsWith('" + addonServiceAccountSuffix + "')))"

// agentTokenUserPrefix starts the user names of the agents' token identities.
const agentTokenUserPrefix = serviceAccountUserPrefix + AgentTokenNamespace + ":"

// IsClusterIdentity reports whether user with groups holds an identity the
// hub issues to a managed cluster: an agent's certificate of any subject
// form (its user name, its cluster's group or the managed-clusters group),
// an add-on agent's certificate (their names and groups all start with
// Prefix), or an agent's token identity. Every such identity is some
// cluster's; which one, RBAC decides. The admission policies that keep
// agents from changing what the hub owns match exactly these identities
// (ClusterIdentityCEL).
func IsClusterIdentity(user string, groups []string) bool {
	return strings.HasPrefix(user, Prefix) || strings.HasPrefix(user, agentTokenUserPrefix) ||
		slices.ContainsFunc(groups, func(g string) bool { return strings.HasPrefix(g, Prefix) })
}

// ClusterIdentityCEL is IsClusterIdentity over an admission request's
// request.userInfo.
const ClusterIdentityCEL = "request.userInfo.username.startsWith('" + Prefix + "') || " +
	"request.userInfo.username.startsWith('" + agentTokenUserPrefix + "') || " +
	"request.userInfo.groups.exists(g, g.startsWith('" + Prefix + "'))"

// IsAgentOf reports whether user with groups is cluster's agent: its
// certificate (its user name or its cluster's group) or its token identity.
func IsAgentOf(user string, groups []string, cluster string) bool {
	agentID, named := strings.CutPrefix(user, Prefix+cluster+":")
	return (named && agentID != "" && !strings.Contains(agentID, ":")) ||
		user == AgentTokenUserName(cluster) || slices.Contains(groups, ClusterGroup(cluster))
}

// AgentOfCEL returns IsAgentOf over an admission request's
// request.userInfo, for the cluster the CEL expression clusterExpr names
// (request.namespace, object.metadata.name).
func AgentOfCEL(clusterExpr string) string {
	named := "'" + Prefix + "' + " + clusterExpr + " + ':'"
	return "(request.userInfo.username.startsWith(" + named + ") && size(request.userInfo.username) > size(" + named + ") && " +
		"!request.userInfo.username.substring(size(" + named + ")).contains(':')) || " +
		"request.userInfo.username == '" + agentTokenUserPrefix + "' + " + clusterExpr + " || " +
		"request.userInfo.groups.exists(g, g == '" + Prefix + "' + " + clusterExpr + ")"
}

// IsBootstrapIdentity reports whether user with groups is a bootstrap
// identity: the shared bootstrap ServiceAccount, any bootstrap token (user
// system:bootstrap:<id>, or in the hub's join-token group), or a
// ServiceAccount of ClusterBootstrapNamespace, where the cluster-bound
// bootstrap ServiceAccounts are (every ServiceAccount there holds the
// bootstrap role). Such an identity registers a cluster; it never writes
// what the hub decides about one.
func IsBootstrapIdentity(user string, groups []string) bool {
	return user == BootstrapUser || strings.HasPrefix(user, BootstrapTokenUserPrefix) ||
		strings.HasPrefix(user, ClusterBootstrapNamespaceUserPrefix) || slices.Contains(groups, BootstrapTokenGroup)
}

// BootstrapIdentityCEL is IsBootstrapIdentity over an admission request's
// request.userInfo.
const BootstrapIdentityCEL = "request.userInfo.username == '" + BootstrapUser + "' || " +
	"request.userInfo.username.startsWith('" + BootstrapTokenUserPrefix + "') || " +
	"request.userInfo.username.startsWith('" + ClusterBootstrapNamespaceUserPrefix + "') || " +
	"request.userInfo.groups.exists(g, g == '" + BootstrapTokenGroup + "')"

// RegistrantAnnotationPrefix starts the only annotations a bootstrap or
// cluster identity may set on a ManagedCluster it creates: OCM's agent
// copies its --cluster-annotations under this prefix. Every other
// annotation of a ManagedCluster (automatic acceptance, the agent's key, the
// client signer, Cluster API's cluster) is written by the hub or its
// administrators.
const RegistrantAnnotationPrefix = "agent.open-cluster-management.io/"

// RegistrantMayAnnotate reports whether a bootstrap or cluster identity may
// set annotation key on a ManagedCluster it creates.
func RegistrantMayAnnotate(key string) bool {
	return strings.HasPrefix(key, RegistrantAnnotationPrefix)
}

// RegistrantAnnotationsCEL is RegistrantMayAnnotate for every annotation of
// the admitted object.
const RegistrantAnnotationsCEL = "object.metadata.?annotations.orValue({}).all(k, k.startsWith('" + RegistrantAnnotationPrefix + "'))"
