// Package tunnel measures what the hub tunnel costs the hub while its
// tunnels are idle: the hub tunnel (ocm-controller tunnel, run by the
// component runner as its Deployment says) serves the aggregated API
// proxy.kubectl-ocm.io behind the hub's real API server, and 100, then
// 1,000 simulated clusters attach their tunnels through it, each with a
// client certificate of its own cluster's agent identity. Printed per step:
// the memory, sockets and idle CPU of the hub tunnel and of the hub's
// API server (which proxies every tunnel), in total and per cluster.
package tunnel
