//go:build tools

// This file is never compiled (build tag "tools"); it only makes "go mod tidy"
// keep the main packages that hack/kube-bins.sh builds.
package containerd

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
)
