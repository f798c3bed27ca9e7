package version

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Where the running components report their build version on the hub, in
// OCM's own shapes, readable with the hub kubeconfig of a user who can read
// ManagedClusters and the ClusterManager.
const (
	// AgentVersionClaim is the claim the agent adds to its ManagedCluster's
	// status.clusterClaims, with its own Version as the value. The agent
	// synthesizes it, as OCM's agent synthesizes the reserved claims such as
	// kubeversion.open-cluster-management.io: it is reported before custom
	// claims, never counted against their limit, and replaces a ClusterClaim
	// of the same name on the managed cluster.
	AgentVersionClaim = "agentversion.kubectl-ocm.io"
	// ConditionHubControllerVersion is the ClusterManager condition whose
	// message is the Version of the hub controller that holds leadership.
	ConditionHubControllerVersion = "HubControllerVersion"
	// ReasonHubControllerRunning is the reason of ConditionHubControllerVersion.
	ReasonHubControllerRunning = "HubControllerRunning"
)

// AgentClaim returns the claim that reports agent version v.
func AgentClaim(v string) clusterv1.ManagedClusterClaim {
	return clusterv1.ManagedClusterClaim{Name: AgentVersionClaim, Value: v}
}

// AgentVersion returns the version the agent of mc reports, "" when it
// reports none (an agent that is not kubectl-ocm's, or not joined yet).
func AgentVersion(mc *clusterv1.ManagedCluster) string {
	v, _ := mc.ClaimValue(AgentVersionClaim)
	return v
}

// HubControllerCondition returns the ClusterManager condition that reports
// hub controller version v, observing generation gen.
func HubControllerCondition(v string, gen int64) metav1.Condition {
	return metav1.Condition{
		Type: ConditionHubControllerVersion, Status: metav1.ConditionTrue,
		Reason: ReasonHubControllerRunning, Message: v, ObservedGeneration: gen,
	}
}

// HubControllerVersion returns the version the hub controller reports on
// cm, "" when it reports none (it has not run yet, or it is not
// kubectl-ocm's).
func HubControllerVersion(cm *operatorv1.ClusterManager) string {
	if c := meta.FindStatusCondition(cm.Status.Conditions, ConditionHubControllerVersion); c != nil {
		return strings.TrimSpace(c.Message)
	}
	return ""
}
