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
// The binaries come from `make kube-bins` (bin/kube, or $KUBE_BIN_DIR).
//
// The package also holds the component Runner, a test harness that plays the
// part of the kubelet for the project's own Deployments: there is no kubelet
// here, so the Runner runs each of them as a local process.
//
// Every child process runs in its own process group and is killed by the
// kernel if the process that started it dies, so an interrupted test run
// leaves nothing behind.
package framework
