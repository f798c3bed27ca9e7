// Package containerd is the module that pins the container runtime of the
// local clusters' nodes: containerd and its runc shim, built from the Go
// module github.com/containerd/containerd/v2 by hack/kube-bins.sh (run by
// "make kube-bins") into bin/kube beside the Kubernetes binaries:
//
//	containerd               github.com/containerd/containerd/v2/cmd/containerd
//	containerd-shim-runc-v2  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
//
// It is a module of its own, not part of test/kube, so that containerd's
// dependencies are resolved as containerd's own go.mod pins them, not merged
// with those of k8s.io/kubernetes. Kubernetes 1.36 and later need containerd
// 2.x; the Debian packages of these machines ship 1.6, hence the build.
//
// The binaries are built with CGO_ENABLED=0: the btrfs and devmapper
// snapshotters, which need cgo, are left out; the nodes use overlayfs.
// runc and the CNI plugins come from Debian (hack/node-deps.sh).
//
// To move to another containerd release: change the version in go.mod and
// run "go mod tidy".
package containerd
