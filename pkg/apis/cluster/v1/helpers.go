package v1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaseDuration returns the agent's lease renewal period:
// spec.leaseDurationSeconds, or 60 seconds when it is zero or negative.
func (s *ManagedClusterSpec) LeaseDuration() time.Duration {
	if s.LeaseDurationSeconds <= 0 {
		return DefaultLeaseDurationSeconds * time.Second
	}
	return time.Duration(s.LeaseDurationSeconds) * time.Second
}

// LeaseGracePeriod returns how long the hub waits for a lease renewal before it
// reports the cluster's availability as Unknown: five lease periods.
func (s *ManagedClusterSpec) LeaseGracePeriod() time.Duration {
	return LeaseGraceFactor * s.LeaseDuration()
}

// IsAccepted reports whether the hub has accepted the cluster: the
// HubAcceptedManagedCluster condition is True. spec.hubAcceptsClient alone is
// only the request; the condition says the hub acted on it.
func (c *ManagedCluster) IsAccepted() bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, ManagedClusterConditionHubAccepted)
}

// IsJoined reports whether the ManagedClusterJoined condition is True.
func (c *ManagedCluster) IsJoined() bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, ManagedClusterConditionJoined)
}

// AvailableStatus returns the status of the ManagedClusterConditionAvailable
// condition, Unknown when the condition is missing.
func (c *ManagedCluster) AvailableStatus() metav1.ConditionStatus {
	if cond := meta.FindStatusCondition(c.Status.Conditions, ManagedClusterConditionAvailable); cond != nil {
		return cond.Status
	}
	return metav1.ConditionUnknown
}

// FindTaint returns the first taint with the given key, or nil.
func (s *ManagedClusterSpec) FindTaint(key string) *Taint {
	for i := range s.Taints {
		if s.Taints[i].Key == key {
			return &s.Taints[i]
		}
	}
	return nil
}

// ClaimValue returns the value of the collected ClusterClaim name and whether
// the cluster reported it.
func (c *ManagedCluster) ClaimValue(name string) (string, bool) {
	for _, claim := range c.Status.ClusterClaims {
		if claim.Name == name {
			return claim.Value, true
		}
	}
	return "", false
}

// ManagedNamespaceLabelKey returns the label key the agent of the hub with
// hash hubHash sets on the managed namespaces it creates, as OCM does:
// ManagedNamespaceLabelKeyPrefix followed by the hash cut to 63 characters,
// the longest name part of a label key.
func ManagedNamespaceLabelKey(hubHash string) string {
	const maxName = 63
	if len(hubHash) > maxName {
		hubHash = hubHash[:maxName]
	}
	return ManagedNamespaceLabelKeyPrefix + hubHash
}
