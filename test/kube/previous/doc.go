// Package previous is the module that pins the previous Kubernetes minor
// release, for the version matrix of kubectl-ocm's tests: a hub at one
// release and a managed cluster at the other, both ways.
//
// Like test/kube, it is a separate Go module so that the main module's go.mod
// stays free of k8s.io/kubernetes; its go.mod requires k8s.io/kubernetes and
// repeats one "replace k8s.io/<staging> => k8s.io/<staging> v0.X.Y" line per
// staging module. hack/kube-bins.sh builds from here, into bin/kube/<version>,
// what a cluster and its node need of their own release:
//
//	kube-apiserver           k8s.io/kubernetes/cmd/kube-apiserver
//	kube-controller-manager  k8s.io/kubernetes/cmd/kube-controller-manager
//	kube-scheduler           k8s.io/kubernetes/cmd/kube-scheduler
//	kubelet                  k8s.io/kubernetes/cmd/kubelet
//	kube-proxy               k8s.io/kubernetes/cmd/kube-proxy
//
// etcd, kubectl and containerd are shared with the current release (test/kube
// and test/kube/containerd): both releases support them.
//
// To move on: set k8s.io/kubernetes to the release before test/kube's, every
// staging replace to the matching v0.X.Y, and run "go mod tidy".
package previous
