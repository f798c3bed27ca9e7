// Package deploystatus answers "is this Deployment ready?" with one rule,
// the one `kubectl rollout status` applies (Of), and, while a Deployment is
// not ready, finds the Pod-level cause (Inspector): an image the node cannot
// pull (named unauthorized when the registry refused the credentials), a
// container that keeps exiting (with its exit and its last log lines), or a
// Pod no node can take, each with its fix.
package deploystatus
