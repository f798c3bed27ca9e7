// Package csr approves the client certificate requests of add-on agents
// (labeled open-cluster-management.io/addon-name) that the hub can vouch
// for, by the rule of pkg/registration/csr (DecideAddon): the request comes
// from the labeled cluster's own agent identity, the cluster is accepted,
// the ManagedClusterAddOn of the labeled add-on exists in the cluster's
// namespace and one of its registrations with the kube-apiserver-client
// signer names exactly the requested subject, which lies within that
// add-on's identities on that cluster. The kube-controller-manager then
// signs the approved request.
//
// Every other add-on request is left pending (an add-on whose registrations
// name another signer or a subject outside its identities is left to its
// own manager) and reconsidered when the add-on's ManagedClusterAddOn or its
// cluster changes. Cluster requests are the cluster approver's
// (controllers/registration/hub/csr).
package csr
