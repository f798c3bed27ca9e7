// Package authz measures what the hub's API server spends authorizing an
// agent's requests, against the number of clusters, with the per-cluster
// ClusterRoleBindings of the hub's earlier design and with the agents'
// shared binding that replaced them (docs/design/authorization.md), on a
// real API server from test/framework with the hub installed as `kubectl
// ocm hub init` installs it.
//
// The benchmark prints figures and asserts nothing about speed:
//
//   - BenchmarkAgentAuthorization: at each size of -sizes, one cluster's
//     agent (its certificate) reads its lease in its namespace, as an
//     idle agent's renewal does, and its ManagedCluster, -requests times
//     each; the API server's CPU per request (from /proc, less its idle
//     rate) and the agent's median latency, with a ClusterRoleBinding per
//     cluster and with the shared binding.
package authz
