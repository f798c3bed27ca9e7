package apply

import (
	"cmp"
	"slices"
)

// Ranks of manifests that are not plain known kinds.
const (
	// UnknownKindRank is the rank of kinds missing from the order table.
	UnknownKindRank = 1000
	// UnparsableRank is the rank of manifests that could not be decoded.
	UnparsableRank = 1001
)

// kindRanks is OCM's resourceApplyOrder: what other objects depend on goes
// first (namespaces and CRDs before what lives in them, RBAC before
// workloads, webhooks and API services last so they cannot block the rest).
var kindRanks = map[string]int{
	"PriorityClass":            0,
	"Namespace":                0,
	"CustomResourceDefinition": 0,
	"StorageClass":             0,
	"PersistentVolume":         0,
	"PodSecurityPolicy":        0,

	"ClusterRole":        1,
	"ClusterRoleBinding": 1,
	"Role":               1,
	"RoleBinding":        1,

	"NetworkPolicy":       2,
	"ResourceQuota":       2,
	"LimitRange":          2,
	"PodDisruptionBudget": 2,
	"ServiceAccount":      2,

	"Secret":                3,
	"ConfigMap":             3,
	"PersistentVolumeClaim": 3,

	"Service": 4,

	"DaemonSet":               5,
	"Pod":                     5,
	"ReplicationController":   5,
	"ReplicaSet":              5,
	"Deployment":              5,
	"HorizontalPodAutoscaler": 5,
	"StatefulSet":             5,
	"Job":                     5,
	"CronJob":                 5,

	"APIService":                       6,
	"MutatingWebhookConfiguration":     6,
	"ValidatingWebhookConfiguration":   6,
	"ValidatingAdmissionPolicy":        6,
	"ValidatingAdmissionPolicyBinding": 6,
}

// KindRank returns the position of kind in OCM's apply order; lower ranks
// are applied first.
func KindRank(kind string) int {
	if r, ok := kindRanks[kind]; ok {
		return r
	}
	return UnknownKindRank
}

// Rank returns the rank of a manifest in the apply order: its kind's, or
// UnparsableRank.
func (m *Manifest) Rank() int {
	if m.Object == nil {
		return UnparsableRank
	}
	return KindRank(m.Object.GetKind())
}

// SortManifests returns the manifests in apply order: stable by rank, so
// manifests of the same rank keep their order in the ManifestWork.
func SortManifests(ms []*Manifest) []*Manifest {
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b *Manifest) int { return cmp.Compare(a.Rank(), b.Rank()) })
	return out
}
