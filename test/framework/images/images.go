// Package images names the images the local clusters' nodes run besides the
// product's own: what `hack/image sandbox` builds and the environment's
// registry serves. The nodes' container runtime mirrors the registries these
// names are in to that local registry, so manifests keep their real image
// names and nothing is pulled from outside the machine.
package images

const (
	// Pause holds each Pod's namespaces: the runtime's sandbox image.
	Pause = "registry.k8s.io/pause:3.10.1"
	// Busybox is what `image: busybox` means, as in the seeds' hello work.
	Busybox = "docker.io/library/busybox:latest"
	// HelloworldAddon is the helloworld example add-on's agent, as its
	// AddOnTemplate names it.
	HelloworldAddon = "quay.io/kubectl-ocm/helloworld-addon:latest"
	// Hellomanager is the hellomanager example add-on's manager, as its
	// manifest names it.
	Hellomanager = "quay.io/kubectl-ocm/hellomanager:latest"
)

// Mirrored are the registries the nodes' runtime fetches from the local
// registry instead.
var Mirrored = []string{"docker.io", "quay.io", "registry.k8s.io"}
