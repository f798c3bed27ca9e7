// Package work tests the work agent against real control planes: a hub with
// the shipped CRDs and agent ClusterRoles, and a managed cluster with the
// shipped agent RBAC. The agent runs in-process as the klusterlet-agent
// ServiceAccount on the managed cluster and reaches the hub with a client
// certificate of the cluster's agent identity, written to the hub credential
// Secret as the registration agent would, so every permission decision is
// the API servers'.
package work
