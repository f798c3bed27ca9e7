// Package hub tests the hub side of cluster registration against a real hub
// control plane: the shipped manifests are applied as the admin, the hub
// controller runs as its shipped ServiceAccount, and tests act as agents,
// bootstrap identities and users with their own certificates, so that every
// permission and admission decision is the API server's.
package hub
