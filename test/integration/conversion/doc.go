// Package conversion holds the integration tests of the add-on API's
// conversion webhook on a real kube-apiserver, with the webhook of the hub
// controller running in-process as the shipped ocm-hub-controller
// ServiceAccount: the seeds' v1alpha1 objects read back at v1beta1 and
// v1alpha1 without loss, the CA bundle injected into the converted CRDs and
// kept through certificate and CA rotation, `hub init` re-run keeping the
// caBundle, `hub status` reporting conversion health, the upgrade of a hub
// that stored add-on objects at v1alpha1, and the TLS profile of the
// webhook's server (ConfigMap ocm-tls-profile) read at start and followed
// when it changes.
//
// The tests start control planes, so they are skipped by `go test -short`.
package conversion
