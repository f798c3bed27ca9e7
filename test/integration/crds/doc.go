// Package crds holds the integration test of the project's
// CustomResourceDefinitions against a real kube-apiserver: the hub CRDs and
// the managed-cluster CRDs install and become established, every seed example
// from the reference documents is accepted unchanged, the API server applies
// the schema defaults, and every validation rule rejects what it should with
// an error that names the offending field.
//
// The test starts control planes, so it is skipped by `go test -short`.
package crds
