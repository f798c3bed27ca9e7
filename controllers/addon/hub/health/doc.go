// Package health reports the health of add-ons on the hub, one managed
// cluster at a time:
//
//   - the Available condition of template add-ons the hub's add-on manager
//     deploys, from the status feedback of their deploy works (OCM's
//     DeploymentAvailability check: every Deployment of the works ready), or
//     from the works' own Available condition when they hold no Deployment;
//   - Available Unknown, with the cluster's reason and message, for every
//     add-on of a cluster whose Available condition turned Unknown (its
//     agents no longer report): template, Lease-mode and self-managed alike,
//     as soon as the ManagedCluster changes. When the cluster comes back,
//     Lease-mode add-ons are left to their agents;
//   - the ManagedCluster label feature.open-cluster-management.io/addon-<name>
//     of each add-on: available, unhealthy or unreachable, removed when the
//     add-on goes away.
//
// Add-ons in Lease mode otherwise get Available from the agent side
// (controllers/addon/agent/lease).
package health
