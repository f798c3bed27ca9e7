package apply

// PartOfLabelKey and PartOfLabelValue mark every object the product installs
// (app.kubernetes.io/part-of=kubectl-ocm); `kubectl ocm hub clean` and
// `unjoin` find what to remove by them.
const (
	PartOfLabelKey   = "app.kubernetes.io/part-of"
	PartOfLabelValue = "kubectl-ocm"
)

// ComponentLabelKey and ClusterBootstrapComponent mark the objects of the
// cluster-bound bootstrap identities (config/cluster-bootstrap), which `hub
// token --cluster-name` creates and `hub clean` removes.
const (
	ComponentLabelKey         = "app.kubernetes.io/component"
	ClusterBootstrapComponent = "cluster-bootstrap"
)
