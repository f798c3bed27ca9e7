//go:build tools

// This file is never compiled (build tag "tools"); it only makes "go mod tidy"
// keep the main packages that hack/kube-bins.sh builds.
package previous

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
