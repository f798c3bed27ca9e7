// Package agent is the add-on side of a managed cluster's agent: it serves
// the cluster's add-ons (ManagedClusterAddOns in the cluster namespace on
// the hub) on the managed cluster.
//
//   - lease: the health of add-ons in Lease mode, from the Lease each
//     add-on agent renews in its install namespace, reported as the
//     ManagedClusterAddOn's Available condition;
//   - registration: the add-ons' hub credentials, obtained through
//     certificate signing requests or, with the token driver, the
//     TokenRequest API, and written as Secret <addon>-hub-kubeconfig in the
//     install namespace.
//
// Like the work agent, it meets the registration agent only through the hub
// credential Secret (hub-kubeconfig-secret in its namespace, pkg/hubsession):
// it connects to the hub with the cluster's agent identity, with a cache of
// the cluster namespace's ManagedClusterAddOns, and reconnects whenever the
// credential changes. The managed cluster's Leases are watched through a
// cache of their own, which lasts across hub sessions; Secrets are read
// directly. In Hosted mode (Options.ManagedCluster built from the managed
// cluster's kubeconfig Secret) Leases and add-on Secrets are on the managed
// cluster, while the hub credential and the pending requests stay on the
// hosting cluster, in the agent's namespace.
package agent
