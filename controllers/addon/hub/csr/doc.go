// Package csr approves the client certificate requests of add-on agents
// (labeled open-cluster-management.io/addon-name) that the hub can vouch
// for, by the rule of pkg/registration/csr (DecideAddon): the request comes
// from the labeled cluster's own agent identity, the cluster is accepted,
// the ManagedClusterAddOn of the labeled add-on exists in the cluster's
// namespace and one of its registrations with the request's signer names
// exactly the requested subject. For the kube-apiserver-client signer that
// subject must lie within the add-on's identities on that cluster, and the
// kube-controller-manager signs the approved request; for a custom signer
// it must also be the subject the add-on's AddOnTemplate names for that
// signer with a signingCA, and the hub's signer (controllers/addon/hub/signer)
// signs it.
//
// Every other add-on request is left pending (an add-on whose registrations
// name a subject outside its identities, or a custom signer no template
// signs, is left to its own manager; a custom-signer request gets a Warning
// Event saying why) and reconsidered when the add-on's ManagedClusterAddOn
// or its cluster changes. Cluster requests are the cluster approver's
// (controllers/registration/hub/csr).
package csr
