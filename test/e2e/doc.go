// Package e2e holds the end-to-end tests: the kubectl-ocm binary driven as a
// user would drive it, against a hub and managed clusters started by the test
// framework, each with a node that runs the product's Pods from the images of
// `make node-images`, as a kind cluster would. The hub fault tests, which
// shorten the hub controller's leader election with arguments its operator
// does not take, run it under the component runner instead.
package e2e
