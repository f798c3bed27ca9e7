// Package hub serves the hub side of the hub tunnel: the aggregated API
// proxy.kubectl-ocm.io/v1alpha1 (pkg/hubtunnel), which the hub's API server
// proxies to the hub tunnel (`ocm-controller tunnel`, Deployment
// ocm-hub-tunnel) through APIService v1alpha1.proxy.kubectl-ocm.io. The
// tunnel runs apart from the hub controller, as a ServiceAccount that may
// only read and ask SubjectAccessReviews; the hub controller keeps its
// serving certificate and registers the APIService (package registrar).
//
// Every request is checked twice. The hub's API server authenticates the
// caller with whatever authenticators the hub has and authorizes the
// subresource with its RBAC before it proxies anything; this server then
// accepts only requests the API server proxied (a front-proxy client
// certificate from the CA and names of ConfigMap
// kube-system/extension-apiserver-authentication), reads the user the API
// server names in its request headers, and asks a SubjectAccessReview for
// the same permission.
//
// A cluster's agent attaches its tunnel (github.com/rancher/remotedialer,
// a WebSocket) at managedclusters/<cluster>/attach; only that cluster's
// agent identity may. A request to managedclusters/<cluster>/proxy/<path>
// is sent through that tunnel to the agent with the caller's identity in
// pkg/hubtunnel's headers and every credential header removed; the agent
// forwards it to its API server as ocm:hub:<user>.
//
// A cluster's agent reads the payload chunks of a ManifestWorkReplicaSet's
// work at managedclusters/<cluster>/chunks/<work>/<chunk>: the chunks stay
// in the set's namespace, and this server returns one only to that
// cluster's agent, while the set places work on the cluster and its
// template or a revision it keeps lists the chunk (chunks.go).
package hub
