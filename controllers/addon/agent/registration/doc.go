// Package registration obtains the hub credentials of add-on agents. For
// each ManagedClusterAddOn of the cluster, it files a certificate signing
// request on the hub for every signer its status.registrations name, with
// the cluster agent's own hub credential, and writes the issued certificate
// into the add-on's install namespace on the managed cluster: Secret
// <addon>-hub-kubeconfig for the kubernetes.io/kube-apiserver-client signer
// (pkg/kubeconfig's hub-credential contract), CustomSignerSecretName
// for any other. Names, labels, conditions and timings are in
// docs/design/addons.md.
//
// A pending request (its private key and name) is kept in a Secret
// <credential Secret>-pending in the agent's namespace (certs.PendingRequest),
// so that a restarted agent waits for the same request, and the credential
// is renewed before it expires (certs.RotationFractionOf). With the token
// driver the hub credential is instead a token of ServiceAccount
// <addon>-agent in the cluster's namespace on the hub, requested with the
// TokenRequest API and refreshed before it expires.
//
// The reconciler owns only Secrets carrying its labels: it never overwrites
// another, and deletes its own when they are no longer wanted. It watches
// them (NewSecretCache, metadata only), so that a deleted or overwritten
// credential is written again within seconds, and reports on the
// ManagedClusterAddOn's ClusterCertificateRotated and TokenRefreshed
// conditions.
package registration
