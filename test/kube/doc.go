// Package kube is the module that pins the Kubernetes control-plane binaries
// used by kubectl-ocm's tests and development environment.
//
// It is a separate Go module (github.com/kubectl-ocm/kubectl-ocm/test/kube) so
// that the main module's go.mod stays free of k8s.io/kubernetes, which cannot
// be consumed as an ordinary dependency: its go.mod replaces every k8s.io
// staging module with a relative ./staging path. This go.mod therefore requires
// k8s.io/kubernetes and repeats one "replace k8s.io/<staging> =>
// k8s.io/<staging> v0.X.Y" line per staging module, plus go.etcd.io/etcd/server/v3
// at the version k8s.io/kubernetes itself requires, so that one module graph
// builds all seven binaries without conflicts.
//
// tools.go (build tag "tools", never compiled) imports the main packages so
// that "go mod tidy" keeps them. hack/kube-bins.sh (run by "make kube-bins")
// builds them from here into bin/kube:
//
//	kube-apiserver           k8s.io/kubernetes/cmd/kube-apiserver
//	kube-controller-manager  k8s.io/kubernetes/cmd/kube-controller-manager
//	kube-scheduler           k8s.io/kubernetes/cmd/kube-scheduler
//	kubelet                  k8s.io/kubernetes/cmd/kubelet
//	kube-proxy               k8s.io/kubernetes/cmd/kube-proxy
//	kubectl                  k8s.io/kubernetes/cmd/kubectl
//	etcd                     go.etcd.io/etcd/server/v3
//
// The local clusters' nodes (test/framework) run the kubelet, kube-proxy and
// kube-scheduler; their container runtime is built from its own module,
// test/kube/containerd.
//
// The Kubernetes binaries are stamped with the k8s.io/kubernetes version from
// this go.mod (-X k8s.io/component-base/version.gitVersion=...), so
// "--version" reports the real release rather than v0.0.0-master.
//
// To move to another Kubernetes release: change the k8s.io/kubernetes version,
// set every staging replace to the matching v0.X.Y, set go.etcd.io/etcd/server/v3
// to the etcd version in that release's go.mod, and run "go mod tidy".
package kube
