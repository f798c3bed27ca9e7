// Package addonagent tests the agent side of add-ons, and the hub's
// approval of add-on certificate requests, against real control planes: a
// hub with everything `hub init` installs, running the registration and
// add-on hub controllers in-process as the shipped ocm-hub-controller
// ServiceAccount, and a managed cluster with the shipped agent RBAC, where
// the add-on agent runs in-process as the klusterlet-agent ServiceAccount.
// The agent reaches the hub with a client certificate of the cluster's
// agent identity, written to the hub credential Secret as the registration
// agent would, and the hub's kube-controller-manager signs the approved
// requests, so every permission decision is the API servers'.
//
// The tests play the hub's deploy controller: they write the
// ManagedClusterAddOns' status.registrations and status.namespace, and
// play the add-on agents by renewing their Leases.
package addonagent
