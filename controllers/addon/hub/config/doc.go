// Package config is the add-on manager's configuration controller. For every
// ClusterManagementAddOn the add-on manager manages it resolves the
// configurations of each ManagedClusterAddOn by OCM's precedence
// (pkg/addon/config), reads each configuration object and hashes its spec,
// and rolls new configurations out placement by placement with pkg/rollout:
// a cluster's status.configReferences[].desiredConfig changes only when the
// rollout of its placement lets the cluster through. It writes the
// ManagedClusterAddOns' supportedConfigs, configReferences and Configured
// condition, and the ClusterManagementAddOn's defaultconfigReferences and
// installProgressions.
//
// How far a cluster got (its Progressing condition and lastAppliedConfig)
// is the rollout controller's (controllers/addon/hub/rollout); this
// controller reads it to decide which clusters go next.
package config
