// Package podcauses tests, on a cluster with a real node that runs the
// product's Pods, that the waiting verbs of `kubectl ocm` name what stops a
// Deployment at the level of its Pods, with the fix: `hub init --wait` given
// an image that does not exist names ImagePullBackOff (or ErrImagePull), the
// image and how to pull from a mirror; `upgrade klusterlet` waiting for a
// hosted agent that crashes on a corrupt managed-cluster kubeconfig Secret
// names CrashLoopBackOff with the agent's last log lines, and for a user who
// may not read Pods, the Deployment's own state. The tests start
// control planes and nodes (root, `make node-images`) and are skipped under
// `go test -short`.
package podcauses
