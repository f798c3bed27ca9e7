// Package framework starts real local Kubernetes control planes for tests, the
// development environment and benchmarks, on a machine without Docker.
//
// One etcd serves every cluster of an Environment; each named cluster gets its
// own kube-apiserver (RBAC authorization, client-certificate, ServiceAccount
// token and bootstrap token authentication, certificates generated in Go) and
// kube-controller-manager (CSR signing for kubernetes.io/kube-apiserver-client,
// namespace deletion, garbage collection, ServiceAccount tokens), each keeping
// its data under a distinct etcd prefix. Everything listens on 127.0.0.1 only.
// One kubeconfig holds a cluster-admin context per cluster.
//
// With Options.Nodes, each cluster also gets a node, as a kind node
// container would give it but without Docker (node.go, with the
// configuration files of nodeconfig/): its own network namespace on the
// environment's bridge, its own mount namespace and cgroup, containerd with
// runc and the CNI plugins, a kubelet, kube-proxy and kube-network-policies
// (netpol.go, which enforces NetworkPolicies), and a kube-scheduler beside
// the API server, which then listens on the bridge. The nodes pull
// from a registry the environment serves on each node's loopback
// (internal/registry), mirroring docker.io, quay.io and registry.k8s.io, so
// manifests keep their real image names and nothing is fetched from
// outside; LoadImage adds the images of a docker save archive or an OCI
// layout (registries.go). A second, private registry, which the nodes
// name localhost:5001, answers only the environment's random credentials,
// which Pods give in imagePullSecrets (PrivateRegistry). The host carries unreachable routes for every Pod and Service
// range in use, and teardown removes every namespace, link, route, mount,
// cgroup and process the nodes made (internal/host: what a killed
// environment left is removed by the next one that takes its slot).
//
// The binaries come from `make kube-bins` (bin/kube, or $KUBE_BIN_DIR), the
// images from `make node-images` (dist/, or $OCM_DIST_DIR).
//
// Beside it, test/framework/runner holds the component Runner, a test
// harness that plays the part of the kubelet for the project's own
// Deployments on clusters without a node, and test/framework/faults the
// disruption scenarios and the observers that record what a disruption
// showed. The framework's own faults are methods of its clusters: restarts
// of etcd and the API server (RestartEtcd, RestartAPIServer), CA rotations
// (rotation.go) and partitions through a Proxy.
//
// Every child process runs in its own process group and is killed by the
// kernel if the process that started it dies, so an interrupted test run
// leaves nothing behind.
package framework
