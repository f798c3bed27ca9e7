package csr

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// A cluster's identity on the hub is its agent's key. The hub records the
// key of the agent whose registration it approves, whoever approves it (the
// hub's auto-approval of a first join, an administrator's `kubectl ocm
// accept`), in the ManagedCluster's annotation
// clusterv1.AgentKeyAnnotationKey, and moves it to the key of each renewal
// it approves: the holder of the current credential proved itself. Decide
// lets an auto-approved bootstrap identity register an accepted cluster
// again only with that key.

// AgentKey returns the pin of the key of mc's agent on record, "" when none.
func AgentKey(mc *clusterv1.ManagedCluster) string {
	return mc.Annotations[clusterv1.AgentKeyAnnotationKey]
}

// SetAgentKey records pin as the key of mc's agent, and reports whether
// that changed mc. An empty pin removes the record: no key, not even one
// x509 cannot encode, registers the cluster again without an
// administrator.
func SetAgentKey(mc *clusterv1.ManagedCluster, pin string) bool {
	old, set := mc.Annotations[clusterv1.AgentKeyAnnotationKey]
	switch {
	case pin == "" && !set, pin != "" && set && old == pin:
		return false
	case pin == "":
		delete(mc.Annotations, clusterv1.AgentKeyAnnotationKey)
		return true
	}
	metav1.SetMetaDataAnnotation(&mc.ObjectMeta, clusterv1.AgentKeyAnnotationKey, pin)
	return true
}
