// Package importer holds the rules of importing a cluster from the hub, in
// one place for the hub's importer and `kubectl ocm import`: the import
// Secret's name and keys (RHACM's auto-import-secret), the credential it may
// carry and how it is read, the addresses the importer refuses to dial, and
// the ManagedClusterImportSucceeded condition with OCM's reasons.
//
// A credential is read into a client configuration by hand, never through
// clientcmd's loaders: a kubeconfig whose user runs a command (exec, an auth
// provider) or names a file (a token, certificate or CA file) would make the
// importer run that command or read its own files, so it is refused, and so
// are skipping TLS verification, a proxy and impersonation.
package importer
