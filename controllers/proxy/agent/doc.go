// Package agent is the managed-cluster end of the hub tunnel
// (pkg/hubtunnel): it keeps a tunnel attached at the hub, with the agent's
// hub credential and through the hub's proxy when the credential names one,
// reconnecting with back-off, and answers what the hub sends through it with
// an in-process forwarder to the cluster's API server.
//
// The forwarder drops every credential and identity header a request
// carries and sends it with the agent's own credential, impersonating
// ocm:hub:<user> and ocm:hub:<group> for the hub user and groups the hub
// names. So the managed cluster's own RBAC decides what a hub user may do
// there, even the hub can act only as such a prefixed identity, and the
// agent's credential never leaves the agent. Nothing listens on a socket:
// the tunnel's connections are handed to the forwarder in memory.
package agent
