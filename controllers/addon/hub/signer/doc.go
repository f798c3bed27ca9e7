// Package signer issues the client certificates of template add-ons'
// custom signers: kube-controller-manager signs only kubernetes.io/
// signers, so for an approved add-on request (labeled
// open-cluster-management.io/addon-name) whose signer is custom
// (registration.IsCustomSigner), the hub signs it itself, as OCM's add-on
// manager does, with the CA of the registration of the add-on's
// AddOnTemplate that names the signer: the kubernetes.io/tls Secret
// customSigner.signingCA (tls.crt and tls.key; in the hub controller's own
// namespace when signingCA.namespace is empty). The certificate, valid for
// a day (or the shorter spec.expirationSeconds) and never beyond the CA,
// carries the request's subject and key and goes to status.certificate.
//
// It signs only what the add-on approver's rule (csr.DecideAddon) still
// accepts: the request of the cluster's own agent for a subject the
// template names for that signer. A request it cannot sign yet (no
// template registration, the CA Secret missing or unreadable) stays
// approved and unsigned, with a Warning Event saying why, and is tried
// again when its add-on changes, and every 30 seconds while the CA cannot
// be used.
package signer
