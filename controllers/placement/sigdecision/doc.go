// Package sigdecision mirrors the placement scheduler's PlacementDecisions
// (cluster.open-cluster-management.io/v1beta1) into PlacementDecisions of the
// SIG-Multicluster Placement Decision API (multicluster.x-k8s.io/v1alpha1,
// KEP-5313), so that consumers written against that API (GitOps engines,
// workload controllers) read the fleet's scheduling without knowing OCM's.
// Each mirror has the name and namespace of its source, the labels of
// KEP-5313 and a controller owner reference to its source, through which the
// garbage collector removes it with its source and so with the Placement.
// The hub runs it with the SIGPlacementDecision feature gate.
package sigdecision
