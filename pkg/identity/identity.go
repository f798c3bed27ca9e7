// Package identity names the users and groups of the registration protocol:
// the identity a managed cluster's agent holds once it has joined, and the
// bootstrap identities a cluster joins with. Everything that checks or
// grants one of them (the CSR approval policy, `kubectl ocm accept`, the
// shipped RBAC and admission policies, the agent's certificate subject)
// spells it through this package.
package identity

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Agent identities, as OCM has them.
const (
	// Prefix starts every agent user and group name.
	Prefix = "system:open-cluster-management:"
	// ManagedClustersGroup is the group of every managed-cluster agent.
	ManagedClustersGroup = Prefix + "managed-clusters"
)

// Bootstrap identities on the hub.
const (
	// BootstrapNamespace holds the bootstrap ServiceAccounts on the hub.
	BootstrapNamespace = "open-cluster-management"
	// BootstrapServiceAccount is the shared ServiceAccount whose tokens any
	// cluster may join with (OCM's).
	BootstrapServiceAccount = "agent-registration-bootstrap"
	// BootstrapUser is the user name of BootstrapServiceAccount.
	BootstrapUser = serviceAccountUserPrefix + BootstrapNamespace + ":" + BootstrapServiceAccount
	// BootstrapTokenUserPrefix starts the user names of bootstrap tokens
	// (system:bootstrap:<token-id>).
	BootstrapTokenUserPrefix = "system:bootstrap:"
	// BootstrapTokenGroup is the group of the bootstrap tokens that the
	// bootstrap role is bound to (OCM's).
	BootstrapTokenGroup = "system:bootstrappers:managedcluster"
	// ClusterBootstrapNamespace holds, on the hub, the cluster-bound
	// bootstrap ServiceAccounts and nothing else: the bootstrap role is
	// bound once to its group (ClusterBootstrapGroup), and admission pins
	// each of its ServiceAccounts to the cluster its name carries. No
	// cluster may be named after it (ValidateClusterName).
	ClusterBootstrapNamespace = "open-cluster-management-cluster-bootstrap"
	// ClusterBootstrapGroup is the group of every ServiceAccount of
	// ClusterBootstrapNamespace, which the bootstrap role is bound to.
	ClusterBootstrapGroup = "system:serviceaccounts:" + ClusterBootstrapNamespace
	// ClusterBootstrapNamespaceUserPrefix starts the user name of every
	// ServiceAccount of ClusterBootstrapNamespace: each holds the bootstrap
	// role, and admission refuses the writes of those that are not a
	// cluster's (ClusterBootstrapServiceAccountPrefix).
	ClusterBootstrapNamespaceUserPrefix = serviceAccountUserPrefix + ClusterBootstrapNamespace + ":"
	// ClusterBootstrapServiceAccountPrefix starts the names of the
	// cluster-bound bootstrap ServiceAccounts: the one of cluster X is
	// agent-registration-bootstrap-X, and the hub lets its tokens register
	// X only.
	ClusterBootstrapServiceAccountPrefix = BootstrapServiceAccount + "-"
	// ClusterBootstrapUserPrefix starts the user names of the cluster-bound
	// bootstrap ServiceAccounts.
	ClusterBootstrapUserPrefix = ClusterBootstrapNamespaceUserPrefix + ClusterBootstrapServiceAccountPrefix

	serviceAccountUserPrefix = "system:serviceaccount:"
)

// AgentUserName returns the user name (certificate CN) of the agent agentID
// of cluster: system:open-cluster-management:<cluster>:<agentID>.
func AgentUserName(cluster, agentID string) string {
	return Prefix + cluster + ":" + agentID
}

// ClusterGroup returns the group of every agent of cluster:
// system:open-cluster-management:<cluster>.
func ClusterGroup(cluster string) string { return Prefix + cluster }

// AgentGroups returns the groups (certificate organizations) of every agent
// of cluster: its cluster's group and the managed-clusters group, both
// always, as OCM's agents ask for them.
func AgentGroups(cluster string) []string {
	return []string{ClusterGroup(cluster), ManagedClustersGroup}
}

// ReservedClusterName is a DNS label no managed cluster may be named: its
// group, ClusterGroup("managed-clusters"), would be ManagedClustersGroup,
// which every agent is in, so every agent would get its grants.
const ReservedClusterName = "managed-clusters"

// ValidateClusterName fails, naming why, unless name may name a managed
// cluster: a DNS-1123 label other than ReservedClusterName and
// AgentTokenNamespace, and none of the names the hub's own objects take. A
// cluster's namespace on the hub is named after it, its agent is granted
// what is in that namespace and its deletion deletes it, so no cluster may
// be named default, kube-* or open-cluster-management*; and its
// ClusterRole is open-cluster-management:managedcluster:<name>, so no
// cluster may be named after a shared agent role (registration, work).
func ValidateClusterName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q is not a DNS-1123 label: %s", name, strings.Join(errs, "; "))
	}
	switch {
	case name == ReservedClusterName:
		return fmt.Errorf("cluster name %q is reserved: every agent is in group %s, so a cluster of that name would share its grants with all of them", name, ManagedClustersGroup)
	case name == AgentTokenNamespace:
		return fmt.Errorf("cluster name %q is reserved: it is the hub namespace of every cluster's token identity, which a cluster of that name would be granted as its own namespace", name)
	case name == "default" || strings.HasPrefix(name, "kube-") || strings.HasPrefix(name, "open-cluster-management"):
		return fmt.Errorf("cluster name %q is reserved: a cluster's namespace on the hub is named after it, and default, kube-* and open-cluster-management* are the hub's own namespaces", name)
	case name == "registration" || name == "work":
		return fmt.Errorf("cluster name %q is reserved: a cluster's ClusterRole would be named like the shared agent role open-cluster-management:managedcluster:%s", name, name)
	}
	return nil
}

// AgentTokenNamespace holds, on the hub, the ServiceAccounts whose tokens
// the agents of clusters registered with the token driver (Klusterlet
// registrationDriver authType token) hold: one per such cluster, named after
// the cluster. Only the hub controller administers it: no cluster namespace
// holds an agent identity, so whoever may edit a cluster namespace (the
// built-in edit and admin roles impersonate its ServiceAccounts and request
// their tokens) is not that cluster's agent. No cluster may be named after
// it (ValidateClusterName).
const AgentTokenNamespace = "open-cluster-management-agent-tokens"

// AgentTokenServiceAccount returns the name of the ServiceAccount, in
// AgentTokenNamespace, of the token identity of cluster's agent: the cluster
// name. The hub creates it when it answers the cluster's first token
// request and deletes it to revoke the cluster's tokens.
func AgentTokenServiceAccount(cluster string) string { return cluster }

// AgentTokenUserName returns the user name of the token identity of
// cluster's agent: system:serviceaccount:open-cluster-management-agent-tokens:<cluster>.
func AgentTokenUserName(cluster string) string {
	return ServiceAccountUserName(AgentTokenNamespace, AgentTokenServiceAccount(cluster))
}

// LegacyAgentServiceAccount is the ServiceAccount, in a cluster's namespace,
// that held the token identity of the cluster's agent before it moved to
// AgentTokenNamespace. It is no identity of anything any more: the hub
// deletes it where it created it, so that a token of it is rejected (401)
// and its agent registers again.
const LegacyAgentServiceAccount = "klusterlet"

// AgentSubjects returns the RBAC subjects of cluster's agent: the group of
// its client certificates (system:open-cluster-management:<cluster>) and,
// when tokenDriver is set, the ServiceAccount of its tokens
// (AgentTokenServiceAccount in AgentTokenNamespace), bound only for clusters
// that registered with the token driver. Every grant to a cluster's agent
// names these, so that both identities hold exactly the same rights; each
// subject costs the API server's authorizer a check per binding and
// request, so a certificate-driver cluster's bindings name one.
func AgentSubjects(cluster string, tokenDriver bool) []rbacv1.Subject {
	subjects := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ClusterGroup(cluster)}}
	if tokenDriver {
		subjects = append(subjects, AgentTokenSubject(cluster))
	}
	return subjects
}

// AgentTokenGroup is the group of every ServiceAccount of
// AgentTokenNamespace: the token identities of every token-driver cluster's
// agent (and the namespace's default ServiceAccount, which no cluster's
// agent is: no cluster may be named default).
const AgentTokenGroup = "system:serviceaccounts:" + AgentTokenNamespace

// AllAgentsSubjects returns the RBAC subjects of every cluster's agent at
// once: the group every agent certificate carries (ManagedClustersGroup,
// which the certificate policy never leaves out) and AgentTokenGroup. The
// hub grants them, in one binding, the cluster-scoped rights that admission,
// the certificate policy or the hub tunnel hold to each agent's own cluster
// (docs/design/authorization.md): one binding costs each request to the hub
// one check, where a binding per cluster cost one per cluster.
func AllAgentsSubjects() []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ManagedClustersGroup},
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: AgentTokenGroup},
	}
}

// AgentTokenSubject returns the RBAC subject of the token identity of
// cluster's agent.
func AgentTokenSubject(cluster string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: AgentTokenServiceAccount(cluster), Namespace: AgentTokenNamespace}
}

// ParseAgentUserName splits an agent user name into its cluster and agent ID.
// ok is false unless user is system:open-cluster-management:<cluster>:<agent>
// with a cluster name that is a DNS-1123 label and an agent ID without colons.
func ParseAgentUserName(user string) (cluster, agentID string, ok bool) {
	rest, found := strings.CutPrefix(user, Prefix)
	if !found {
		return "", "", false
	}
	cluster, agentID, found = strings.Cut(rest, ":")
	if !found || agentID == "" || strings.Contains(agentID, ":") || len(validation.IsDNS1123Label(cluster)) > 0 {
		return "", "", false
	}
	return cluster, agentID, true
}

// parseAgentTokenUserName returns the cluster whose agent token identity
// user is: system:serviceaccount:open-cluster-management-agent-tokens:<cluster>
// with a cluster name that is a DNS-1123 label.
func parseAgentTokenUserName(user string) (string, bool) {
	cluster, ok := strings.CutPrefix(user, serviceAccountUserPrefix+AgentTokenNamespace+":")
	if !ok || len(validation.IsDNS1123Label(cluster)) > 0 {
		return "", false
	}
	return cluster, true
}

// ClusterBootstrapServiceAccount returns the name of the bootstrap
// ServiceAccount bound to cluster: agent-registration-bootstrap-<cluster>.
func ClusterBootstrapServiceAccount(cluster string) string {
	return ClusterBootstrapServiceAccountPrefix + cluster
}

// ClusterBootstrapUser returns the user name of the bootstrap ServiceAccount
// bound to cluster.
func ClusterBootstrapUser(cluster string) string { return ClusterBootstrapUserPrefix + cluster }

// BootstrapServiceAccountOf returns the namespace and name of the bootstrap
// ServiceAccount bound to cluster (ClusterBootstrapServiceAccount in
// ClusterBootstrapNamespace), or of the shared one when cluster is "".
func BootstrapServiceAccountOf(cluster string) (namespace, name string) {
	if cluster == "" {
		return BootstrapNamespace, BootstrapServiceAccount
	}
	return ClusterBootstrapNamespace, ClusterBootstrapServiceAccount(cluster)
}

// Kind is the kind of identity that made a request.
type Kind int

// The kinds of requester.
const (
	// Other is any identity the registration protocol does not know.
	Other Kind = iota
	// Agent is a managed cluster's agent (its client certificate or its
	// token identity).
	Agent
	// SharedBootstrap is a bootstrap identity any cluster may join with: the
	// shared bootstrap ServiceAccount or a bootstrap token.
	SharedBootstrap
	// ClusterBootstrap is a bootstrap ServiceAccount bound to one cluster.
	ClusterBootstrap
)

// String names the kind in messages.
func (k Kind) String() string {
	return [...]string{"other identity", "agent identity", "shared bootstrap identity", "cluster-bound bootstrap identity"}[k]
}

// Requester is what the user name of a request says about who made it.
type Requester struct {
	// Kind is the kind of identity.
	Kind Kind
	// Cluster is the cluster an Agent or ClusterBootstrap identity belongs
	// to; empty for the other kinds.
	Cluster string
}

// Classify tells which registration identity user is. The agent of a
// cluster is its certificate identity or its token identity
// (AgentTokenUserName, in AgentTokenNamespace, which only the hub controller
// administers); no ServiceAccount of a cluster namespace is.
func Classify(user string) Requester {
	if cluster, _, ok := ParseAgentUserName(user); ok {
		return Requester{Kind: Agent, Cluster: cluster}
	}
	if cluster, ok := parseAgentTokenUserName(user); ok {
		return Requester{Kind: Agent, Cluster: cluster}
	}
	if user == BootstrapUser || (strings.HasPrefix(user, BootstrapTokenUserPrefix) && len(user) > len(BootstrapTokenUserPrefix)) {
		return Requester{Kind: SharedBootstrap}
	}
	if cluster, ok := strings.CutPrefix(user, ClusterBootstrapUserPrefix); ok && len(validation.IsDNS1123Label(cluster)) == 0 {
		return Requester{Kind: ClusterBootstrap, Cluster: cluster}
	}
	return Requester{}
}

// Add-on agent identities, as OCM has them: the hub credential an add-on
// agent obtains through its registration.
const (
	// addonClusterPrefix starts the user and group names of an add-on agent
	// of a cluster: system:open-cluster-management:cluster:<cluster>:addon:<addon>.
	addonClusterPrefix = Prefix + "cluster:"
	// addonPrefix starts the group of every agent of one add-on.
	addonPrefix = Prefix + "addon:"
	// AuthenticatedGroup is the group the API server gives every
	// authenticated user; OCM lists it in an add-on's default subject.
	AuthenticatedGroup = "system:authenticated"
)

// AddonClusterGroup returns the group of the agents of addon on cluster:
// system:open-cluster-management:cluster:<cluster>:addon:<addon>.
func AddonClusterGroup(cluster, addon string) string {
	return addonClusterPrefix + cluster + ":addon:" + addon
}

// AddonGroup returns the group of the agents of addon on every cluster:
// system:open-cluster-management:addon:<addon>.
func AddonGroup(addon string) string { return addonPrefix + addon }

// AddonUserName returns the default user name (certificate CN) of the agent
// of addon on cluster:
// system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>.
// OCM names the agent after the add-on.
func AddonUserName(cluster, addon, agent string) string {
	return AddonClusterGroup(cluster, addon) + ":agent:" + agent
}

// AddonDefaultGroups returns the groups of an add-on agent's default
// subject: the add-on's groups for cluster and for every cluster, and
// system:authenticated.
func AddonDefaultGroups(cluster, addon string) []string {
	return []string{AddonClusterGroup(cluster, addon), AddonGroup(addon), AuthenticatedGroup}
}

// ServiceAccountUserName returns the user name the API server gives the
// tokens of ServiceAccount name in namespace:
// system:serviceaccount:<namespace>:<name>.
func ServiceAccountUserName(namespace, name string) string {
	return serviceAccountUserPrefix + namespace + ":" + name
}

// ParseServiceAccountUserName returns the namespace and name of the
// ServiceAccount user is, system:serviceaccount:<namespace>:<name>, and
// false when user is not a ServiceAccount's.
func ParseServiceAccountUserName(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, serviceAccountUserPrefix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	if !ok || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

// AddonServiceAccount returns the name of the hub ServiceAccount whose
// tokens the agents of addon hold with the token driver: <addon>-agent, in
// the cluster namespace, as OCM names it.
func AddonServiceAccount(addon string) string { return addon + addonServiceAccountSuffix }

// addonServiceAccountSuffix ends the name of every add-on agent's token
// ServiceAccount.
const addonServiceAccountSuffix = "-agent"

// AddonTokenUserName returns the user name of the agent of addon on cluster
// with the token driver: system:serviceaccount:<cluster>:<addon>-agent.
func AddonTokenUserName(cluster, addon string) string {
	return ServiceAccountUserName(cluster, AddonServiceAccount(addon))
}

// HostedAgentNamespace names the namespace of the agent of cluster in
// Hosted mode, on its hosting cluster: klusterlet-<cluster>, also its
// Klusterlet's name there.
func HostedAgentNamespace(cluster string) string { return "klusterlet-" + cluster }

// HostedAgentServiceAccount is the ServiceAccount of a hosted agent, in
// HostedAgentNamespace on the hosting cluster.
const HostedAgentServiceAccount = "klusterlet-agent"

// HostedAgentSubject is the hosted agent of cluster as a subject of a
// binding on its hosting cluster.
func HostedAgentSubject(cluster string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: HostedAgentNamespace(cluster), Name: HostedAgentServiceAccount}
}
