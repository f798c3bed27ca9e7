// Package proxycli tests `kubectl ocm proxy kubeconfig` and `kubectl ocm
// credentials` against real API servers: a hub whose aggregation layer
// serves proxy.kubectl-ocm.io through the hub tunnel's server, run
// in-process, and cluster1, whose agent attaches its end of the tunnel
// in-process. The CLI runs in-process as hub users with a client
// certificate or a ServiceAccount token, and real kubectl uses what it
// writes: the kubeconfigs, and the built kubectl-ocm as their exec plugin.
package proxycli
