// Package patch tests the controllers' patch helper (pkg/patch) against a
// real hub API server: the shipped hub manifests are applied as the admin,
// the helper writes as the shipped ocm-hub-controller ServiceAccount, and
// the admin plays the other writer (an agent reporting its conditions, a
// user adding a finalizer) between the helper's read and its patch.
//
// The test starts a control plane, so it is skipped by `go test -short`.
package patch
