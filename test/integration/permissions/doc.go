// Package permissions keeps what each identity the product creates or
// approves may do on the hub in a file, testdata/hub-permissions.txt, and
// fails when the hub's RBAC no longer matches it, so that a right widened or
// narrowed shows up in review as a line of that file.
//
// TestHubPermissions starts a hub with the RBAC the product ships (the
// manifests of config/ rendered by the product's own code), lets the hub
// controller accept two clusters and set up two add-ons as it does in a
// cluster, and asks the API server one SubjectAccessReview per cell of a grid
// (verb × resource × scope) for every identity, as the API server
// authenticates it. Regenerate the file with
//
//	go test ./test/integration/permissions -update
//
// as Kubernetes keeps its bootstrap roles
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata).
package permissions
