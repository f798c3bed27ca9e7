package crds_test

import (
	"fmt"
	"strings"
)

// spreadConstraints returns n spread constraint terms in flow style.
func spreadConstraints(n int) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("{topologyKey: key%d, topologyKeyType: Label}", i)
	}
	return "[" + strings.Join(terms, ", ") + "]"
}

// clusterInvalidCases break the rules of the cluster.open-cluster-management.io APIs.
var clusterInvalidCases = []invalidCase{
	{
		name: "ManagedCluster client config URL must be https",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: http-url}
spec: {hubAcceptsClient: false, managedClusterClientConfigs: [{url: "http://cluster:6443"}]}`,
		wantField: "spec.managedClusterClientConfigs[0].url", wantMessage: "url must be an https URL",
	},
	{
		name: "ManagedCluster taint effect must be NoSelect, PreferNoSelect or NoSelectIfNew",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: bad-taint}
spec: {taints: [{key: gpu, effect: NoSchedule}]}`,
		wantField: "spec.taints[0].effect",
	},
	{
		name: "ManagedCluster taint key must be a qualified name",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: bad-taint-key}
spec: {taints: [{key: "not a key", effect: NoSelect}]}`,
		wantField: "spec.taints[0].key",
	},
	{
		name: "ManagedCluster leaseDurationSeconds must not be negative",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: negative-lease}
spec: {leaseDurationSeconds: -1}`,
		wantField: "spec.leaseDurationSeconds",
	},
	{
		name: "ManagedCluster name must be a DNS-1123 label",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: cluster.example.com}
spec: {}`,
		wantField: "metadata.name", wantMessage: "DNS-1123 label",
	},
	{
		// Its namespace would be one of the hub's own.
		name: "ManagedCluster name kube-system is reserved",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: kube-system}
spec: {}`,
		wantField: "metadata.name", wantMessage: "kube-* and open-cluster-management* are reserved",
	},
	{
		// Its ClusterRole would be the shared work role.
		name: "ManagedCluster name work is reserved",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: work}
spec: {}`,
		wantField: "metadata.name", wantMessage: "registration and work are reserved",
	},
	{
		// Its group would be the one every agent is in.
		name: "ManagedCluster name managed-clusters is reserved",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: managed-clusters}
spec: {}`,
		wantField: "metadata.name", wantMessage: "managed-clusters is reserved",
	},
	{
		// Its namespace would be the one of every cluster's token identity.
		name: "ManagedCluster name open-cluster-management-agent-tokens is reserved",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: open-cluster-management-agent-tokens}
spec: {}`,
		wantField: "metadata.name", wantMessage: "open-cluster-management-agent-tokens is reserved",
	},
	{
		name: "ManagedClusterSetBinding name must equal spec.clusterSet (v1beta2)",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: prod, namespace: default}
spec: {clusterSet: dev}`,
		wantField: "spec.clusterSet", wantMessage: "same name as the target ManagedClusterSet",
	},
	{
		name: "ManagedClusterSetBinding name must equal spec.clusterSet (v1beta1)",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: ManagedClusterSetBinding
metadata: {name: prod, namespace: default}
spec: {clusterSet: dev}`,
		wantField: "spec.clusterSet", wantMessage: "same name as the target ManagedClusterSet",
	},
	{
		name: "ManagedClusterSet v1beta2 does not accept the legacy selector type",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: legacy-v1beta2}
spec: {clusterSelector: {selectorType: LegacyClusterSetLabel}}`,
		wantField: "spec.clusterSelector.selectorType",
	},
	{
		name: "ManagedClusterSet managed namespace must be a DNS-1123 label",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: bad-namespace}
spec: {managedNamespaces: [{name: Not_A_Namespace}]}`,
		wantField: "spec.managedNamespaces[0].name",
	},
	{
		name: "Placement numberOfClusters must not be negative",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: negative-count, namespace: default}
spec: {numberOfClusters: -1}`,
		wantField: "spec.numberOfClusters",
	},
	{
		name: "Placement allows at most 8 spread constraints",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: too-many-spreads, namespace: default}
spec: {spreadPolicy: {spreadConstraints: ` + spreadConstraints(9) + `}}`,
		wantField: "spec.spreadPolicy.spreadConstraints",
	},
	{
		name: "Placement spread constraint maxSkew must be at least 1",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: zero-skew, namespace: default}
spec: {spreadPolicy: {spreadConstraints: [{topologyKey: zone, topologyKeyType: Label, maxSkew: 0}]}}`,
		wantField: "spec.spreadPolicy.spreadConstraints[0].maxSkew",
	},
	{
		name: "Placement spread constraint topologyKeyType must be Label or Claim",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-topology-type, namespace: default}
spec: {spreadPolicy: {spreadConstraints: [{topologyKey: zone, topologyKeyType: Annotation}]}}`,
		wantField: "spec.spreadPolicy.spreadConstraints[0].topologyKeyType",
	},
	{
		name: "Placement toleration operator must be Equal or Exists",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-operator, namespace: default}
spec: {tolerations: [{key: gpu, operator: In}]}`,
		wantField: "spec.tolerations[0].operator",
	},
	{
		name: "Placement toleration effect must be a taint effect",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-effect, namespace: default}
spec: {tolerations: [{key: gpu, effect: NoExecute}]}`,
		wantField: "spec.tolerations[0].effect",
	},
	{
		name: "Placement prioritizer weight must be within -10 and 10",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: heavy-weight, namespace: default}
spec: {prioritizerPolicy: {configurations: [{scoreCoordinate: {builtIn: Balance}, weight: 11}]}}`,
		wantField: "spec.prioritizerPolicy.configurations[0].weight",
	},
	{
		name: "Placement prioritizer mode must be Additive or Exact",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-mode, namespace: default}
spec: {prioritizerPolicy: {mode: Random}}`,
		wantField: "spec.prioritizerPolicy.mode",
	},
	{
		name: "Placement score coordinate type must be BuiltIn or AddOn",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-score-type, namespace: default}
spec: {prioritizerPolicy: {configurations: [{scoreCoordinate: {type: Custom}}]}}`,
		wantField: "spec.prioritizerPolicy.configurations[0].scoreCoordinate.type",
	},
	{
		name: "Placement clustersPerDecisionGroup must be a positive number or percentage",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-group-size, namespace: default}
spec: {decisionStrategy: {groupStrategy: {clustersPerDecisionGroup: "0%"}}}`,
		wantField: "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup",
	},
	{
		name: "Placement decision group name must be a label value",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-group-name, namespace: default}
spec: {decisionStrategy: {groupStrategy: {decisionGroups: [{groupName: "canary west", groupClusterSelector: {}}]}}}`,
		wantField: "spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName",
	},
	{
		name: "Placement sortBy must be ClusterName or Score",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: bad-sort, namespace: default}
spec: {sortBy: Age}`,
		wantField: "spec.sortBy",
	},
	{
		name: "AddOnPlacementScore value must be within -100 and 100",
		obj: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata: {name: scores, namespace: cluster1}`,
		status:    `scores: [{name: cpu, value: 101}]`,
		wantField: "status.scores[0].value",
	},
	{
		name:    "ClusterClaim value is at most 1024 characters",
		managed: true,
		obj: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: long.example.com}
spec: {value: ` + strings.Repeat("x", 1025) + `}`,
		wantField: "spec.value",
	},
	{
		name:    "ClusterClaim value must not be empty",
		managed: true,
		obj: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: empty.example.com}
spec: {value: ""}`,
		wantField: "spec.value",
	},
}
