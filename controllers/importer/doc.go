// Package importer is the hub's cluster importer (`ocm-controller
// importer`, feature gate ClusterImporter): for a ManagedCluster whose
// namespace holds an import Secret (pkg/importer), it installs the
// Klusterlet operator and Klusterlet on that cluster with the Secret's
// credential, as `kubectl ocm join` would, handing the agent a bootstrap
// token bound to that one cluster. The agent then registers like any
// joining agent: acceptance still follows hubAcceptsClient or the
// auto-approval rules, never the import.
//
// The importer runs as its own ServiceAccount, with only what it needs
// (config/hub/12-importer-role.yaml, from the markers here): it reads
// import Secrets by name, the hub's CA bundle and cluster-info, writes the
// ManagedClusterImportSucceeded condition, and issues bootstrap tokens of
// cluster-bound bootstrap ServiceAccounts only, which the admission policy
// importer.open-cluster-management.io enforces. It keeps the credential no
// longer than one import: it is read from the Secret for each attempt,
// never cached or logged, and the Secret is deleted after a successful
// import unless it asks to be kept.
package importer
