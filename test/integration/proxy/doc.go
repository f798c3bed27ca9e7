// Package proxy tests the hub tunnel against real API servers: the hub's
// API server with its aggregation layer proxies proxy.kubectl-ocm.io to the
// hub controller's tunnel server, run in-process as the shipped
// ocm-hub-controller ServiceAccount, and the agents of cluster1 and cluster2
// run their end in-process as the shipped klusterlet-agent ServiceAccount,
// attaching with client certificates of their cluster's agent identity. Who
// may attach, who may proxy and what a proxied request may do are decided
// by the hub's and the managed clusters' own RBAC.
package proxy
