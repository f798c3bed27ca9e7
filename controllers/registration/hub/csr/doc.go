// Package csr approves the client certificate requests of managed cluster
// agents that the hub can vouch for, and leaves every other request pending
// for `kubectl ocm accept`. What is approvable is decided by the shared
// policy in pkg/registration/csr, which `kubectl ocm accept` applies too.
//
// Two kinds of request are approved automatically:
//
//   - renewals: the requester is the agent's current certificate identity,
//     equal to the requested common name, for a cluster the hub accepted, and
//     the authorizer allows it to renew managedclusters/clientcertificates;
//     the renewal's key becomes the agent's key on record;
//   - first joins from bootstrap identities the administrator listed in the
//     ClusterManager's spec.registrationConfiguration.autoApproveUsers or with
//     --auto-approved-csr-users; the first join accepts the cluster and
//     records its request's UID and key. A later request of such an identity
//     for the cluster is approved only when it is that request again (its
//     UID) or holds the agent's key on record: its agent registering again.
//
// No request whose subject names a cluster other than its cluster-name label,
// or that a cluster-bound identity of another cluster made, is ever approved.
// Add-on agents' requests (labeled open-cluster-management.io/addon-name) are
// not looked at: the add-on approver (controllers/addon/hub/csr) decides on
// them.
package csr
