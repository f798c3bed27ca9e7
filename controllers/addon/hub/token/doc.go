// Package token keeps the hub side of the token driver: for each
// ManagedClusterAddOn whose agent reports status.kubeClientDriver token and
// that has a kube-apiserver-client registration, it writes, in the
// cluster's namespace, ServiceAccount <addon>-agent (whose tokens the
// add-on's agent holds), Role <addon>-token-role allowing create on
// serviceaccounts/token of that ServiceAccount only, and RoleBinding
// <addon>-token-role granting it to the cluster's agent (its certificate
// group, as OCM's add-on manager does, and its token identity;
// identity.AgentSubjects). They carry OCM's
// labels addon.open-cluster-management.io/name and
// addon.open-cluster-management.io/token-infrastructure, and
// open-cluster-management.io/cluster-name (the hub caches only labeled
// RBAC), and are owned by the ManagedClusterAddOn, so they go with it.
//
// It reports on the ManagedClusterAddOn's TokenInfrastructureReady
// condition: True (TokenInfrastructureReady, "ServiceAccount
// <cluster>/<addon>-agent (UID: <uid>) is ready", the UID the agent checks
// its tokens against) or False (TokenInfrastructureApplyFailed). When the
// add-on stops using the token driver, it deletes them and removes the
// condition.
//
// What the add-on may do on the hub is granted by its registration's hub
// permissions (the deploy controller binds them to the ServiceAccount as
// well as to the add-on's certificate group), or by the add-on's own
// manager; the ServiceAccount itself is granted nothing here.
package token
