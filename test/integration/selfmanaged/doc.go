// Package selfmanaged tests an add-on whose own manager runs on the hub
// (ClusterManagementAddOn annotation addon.open-cluster-management.io/lifecycle:
// self) against the hub controllers and the agents of this project, on real
// control planes: a hub with everything `hub init` installs, running the
// registration and add-on hub controllers in-process as the shipped
// ocm-hub-controller ServiceAccount, and a managed cluster running the work
// and add-on agents in-process as the klusterlet-agent ServiceAccount; the
// hub's kube-controller-manager signs the approved requests.
//
// The tests play the add-on's manager as an addon-framework manager of OCM
// behaves: with raw addon.open-cluster-management.io/v1beta1 objects spelled
// with OCM's field, label and annotation names, under a ServiceAccount of its
// own holding the rules of such a manager's ClusterRole, so that a missing
// permission, a field our types do not carry or a conversion that drops one
// fails them. They play the add-on's agent with the hub credential Secret it
// is given and a Lease it renews on the managed cluster.
package selfmanaged
