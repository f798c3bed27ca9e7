// Package addondeploy tests the deployment and health of template add-ons
// on real control planes: a hub with the shipped manifests, where the
// add-on manager's deploy and health controllers run as the hub
// controller's ServiceAccount, and a managed cluster whose work agent runs
// in-process as its shipped ServiceAccount (test/kit/agenttest).
// The tests play the configuration controller: they write each
// ManagedClusterAddOn's status.configReferences[].desiredConfig themselves.
// With no kubelet, they also write the status of the Deployments and Jobs
// the agent applied, and the ManagedCluster's Available condition; the
// managed cluster's Pod Security admission is asked with dry-run Pods.
package addondeploy
