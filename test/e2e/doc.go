// Package e2e holds the end-to-end tests: the kubectl-ocm binary driven as a
// user would drive it, against a hub and managed clusters started by the test
// framework, with every ocm-controller Deployment run by the component runner
// as its own ServiceAccount.
package e2e
