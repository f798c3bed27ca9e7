package selfmanaged

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// addonUser is the user of OCM's default subject of the add-on's agent on
// cluster1 (addon-framework's DefaultUser, the agent named after the add-on).
func addonUser() string {
	return fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:%s", clusterName, addonName, addonName)
}

// addonGroup is the group of the add-on's agents on cluster1, the first of
// addon-framework's DefaultGroups.
func addonGroup() string {
	return fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", clusterName, addonName)
}

// addonGroups are addon-framework's DefaultGroups of the add-on on cluster1.
func addonGroups() []any {
	return []any{addonGroup(), "system:open-cluster-management:addon:" + addonName}
}

// managerStatus is the ManagedClusterAddOn status addon-framework's
// registration controller writes at v1beta1 for an add-on whose agent uses
// a kubeClient registration with the default subject, in Lease health mode,
// besides its conditions.
func managerStatus(t *testing.T) map[string]any {
	t.Helper()
	status := fragment(t, `
supportedConfigs:
- group: addon.open-cluster-management.io
  resource: addondeploymentconfigs
relatedObjects:
- group: addon.open-cluster-management.io
  resource: clustermanagementaddons
  name: %s
registrations:
- type: kubeClient
  kubeClient:
    subject:
      user: %s
namespace: %s
healthCheck:
  mode: Lease`, addonName, addonUser(), installNS)
	kit.Must(t, "set the subject's groups", unstructured.SetNestedSlice(
		status["registrations"].([]any)[0].(map[string]any), addonGroups(), "kubeClient", "subject", "groups"))
	return status
}

// deployWorkObject is the manager's deploy work for cluster1, owned by the
// ManagedClusterAddOn of UID owner: the agent's namespace (orphaned on
// removal, as addon-framework does for manifests annotated
// addon.open-cluster-management.io/deletion-orphan), its ServiceAccount and
// the Role that lets it renew its Lease.
func deployWorkObject(t *testing.T, owner types.UID) *unstructured.Unstructured {
	t.Helper()
	return object(t, `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: %[1]s
  name: %[2]s
  labels:
    open-cluster-management.io/addon-name: %[3]s
  ownerReferences:
  - apiVersion: addon.open-cluster-management.io/v1beta1
    kind: ManagedClusterAddOn
    name: %[3]s
    uid: %[4]s
    controller: true
    blockOwnerDeletion: true
spec:
  deleteOption:
    propagationPolicy: SelectivelyOrphan
    selectivelyOrphans:
      orphaningRules:
      - group: ""
        resource: namespaces
        name: %[5]s
  workload:
    manifests:
    - apiVersion: v1
      kind: Namespace
      metadata:
        name: %[5]s
        annotations:
          addon.open-cluster-management.io/deletion-orphan: ""
    - apiVersion: v1
      kind: ServiceAccount
      metadata: {namespace: %[5]s, name: %[6]s}
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: Role
      metadata: {namespace: %[5]s, name: %[6]s}
      rules:
      - apiGroups: [coordination.k8s.io]
        resources: [leases]
        verbs: [get, create, update]
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {namespace: %[5]s, name: %[6]s}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[6]s}
      subjects:
      - {kind: ServiceAccount, namespace: %[5]s, name: %[6]s}`,
		clusterName, deployWork, addonName, owner, installNS, agentSA)
}
