// Package nodes holds the benchmarks of the product as it ships: Pods of the
// ocm-controller image `make image` builds, on the nodes of the test
// framework's clusters (a kubelet, kube-proxy and containerd each). They
// print figures and assert nothing about speed; see test/bench/README.md.
package nodes
