// Package registration obtains the hub credentials of add-on agents: for
// each ManagedClusterAddOn of the cluster whose status.registrations name
// the kubernetes.io/kube-apiserver-client signer, it files a certificate
// signing request on the hub for the registration's subject (OCM's default
// add-on identity when the subject names no user), with the cluster agent's
// own hub credential (generateName addon-<cluster>-<addon>-, labels
// open-cluster-management.io/cluster-name and
// open-cluster-management.io/addon-name), waits until the hub's add-on
// approver approves it and the signer issues it, and writes the certificate
// as Secret <addon>-hub-kubeconfig in the add-on's install namespace on the
// managed cluster, by pkg/kubeconfig's hub-credential contract
// (kubeconfig.AddonCredentialData): the kubeconfig's server, CA and proxy
// are those of the agent's own hub credential.
//
// The private key and the name of a pending request are kept in Secret
// <addon>-hub-kubeconfig-pending in the agent's namespace, as the
// registration agent keeps its own (certs.PendingRequest), so that a
// restarted agent waits for the same request. The credential is renewed
// once 20-25 % of its lifetime remains (certs.RotationFractionOf); the old
// one stays in the Secret until the new one is issued.
//
// The Secrets the reconciler writes carry both labels; it never overwrites
// a Secret without them, and it deletes them (and a pending request) when
// the registration, or the ManagedClusterAddOn, goes away, or when the
// install namespace moves. It reports on the ManagedClusterAddOn's
// ClusterCertificateRotated condition: True (ClientCertificateUpdated) with
// a valid credential, False (ClientCertificateUpdateFailed) when the hub
// denied a request or the credential cannot be written.
//
// With the token driver (Reconciler.Driver token, which the reconciler
// reports as status.kubeClientDriver), the reconciler sets the
// registration's subject to the user of ServiceAccount <addon>-agent in the
// cluster's namespace on the hub, waits until the hub reports
// TokenInfrastructureReady True, requests a token of that ServiceAccount
// with the TokenRequest API as the cluster's agent identity and writes it
// to the same Secret (kubeconfig.AddonTokenCredentialData). It refreshes
// the token after 80 % of its lifetime, or at once when the token names
// another ServiceAccount UID than the condition, and reports on the
// TokenRefreshed condition.
//
// For each registration with another signer (the first of each signer),
// it files a request the same way with that signer and the registration's
// subject, and writes the issued certificate as OCM lays it out: Secret
// <addon>-<signer with / replaced by ->-client-cert in the install
// namespace with tls.crt, tls.key and cluster-name; its pending request is
// kept in <that Secret>-pending in the agent's namespace. It renews, reports
// and cleans up as for the hub credential; ClusterCertificateRotated names
// every certificate, and is False while one of them fails.
//
// The credential Secrets are watched (NewSecretCache: the agent's own, by
// label, metadata only), so that a deleted or overwritten one is written
// again within seconds; a valid credential is otherwise checked again at
// ResyncInterval.
package registration
