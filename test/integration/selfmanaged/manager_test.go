package selfmanaged

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// The add-on and its manager, as addon-framework's helloworld example names them.
const (
	addonName = "helloworld"
	// managerNS holds the manager's ServiceAccount, the Placement it installs
	// by and the AddOnDeploymentConfig its ClusterManagementAddOn names.
	managerNS = "open-cluster-management"
	managerSA = "helloworld-controller"
	// managerAgent is the manager's user agent, the field manager of its writes.
	managerAgent = "helloworld-addon-manager"
	// placementName is the Placement of the add-on's install strategy.
	placementName = "global"
	// configName is the AddOnDeploymentConfig of the add-on's defaultConfigs.
	configName = "global"
	// installNS is addon-framework's default install namespace, which the
	// manager writes to status.namespace.
	installNS = "open-cluster-management-agent-addon"
	// agentSA is the add-on agent's ServiceAccount on the managed cluster.
	agentSA = "helloworld-agent"
	// agentHubRole is the Role and RoleBinding the manager grants the agent
	// in its cluster's namespace on the hub.
	agentHubRole = "open-cluster-management:helloworld:agent"
	// deployWork is the manager's deploy ManifestWork.
	deployWork = "addon-helloworld-deploy-0"
)

// OCM's API groups and versions, spelled out as the manager sends them.
const (
	addonV1beta1   = "addon.open-cluster-management.io/v1beta1"
	clusterV1      = "cluster.open-cluster-management.io/v1"
	clusterV1beta1 = "cluster.open-cluster-management.io/v1beta1"
	workV1         = "work.open-cluster-management.io/v1"
)

// managerRules are the rules of an addon-framework manager's ClusterRole:
// what its informers list and watch (ManagedClusters, Placements and their
// decisions, the four add-on kinds at v1beta1, ManifestWorks, CSRs), what it
// writes (its add-on objects, deploy works, the RBAC of its agents on the
// hub), and the ConfigMaps it lets its agents read.
var managerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters", "placements", "placementdecisions"},
		Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"clustermanagementaddons"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
	{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"clustermanagementaddons/status", "managedclusteraddons/status"},
		Verbs: []string{"update", "patch"}},
	{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"clustermanagementaddons/finalizers", "managedclusteraddons/finalizers"},
		Verbs: []string{"update"}},
	{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"addondeploymentconfigs", "addontemplates"},
		Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"},
		Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// watched are the lists an addon-framework manager's informers hold.
var watched = []schema.GroupVersionKind{
	{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedClusterList"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "PlacementList"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "PlacementDecisionList"},
	{Group: "addon.open-cluster-management.io", Version: "v1beta1", Kind: "ClusterManagementAddOnList"},
	{Group: "addon.open-cluster-management.io", Version: "v1beta1", Kind: "ManagedClusterAddOnList"},
	{Group: "addon.open-cluster-management.io", Version: "v1beta1", Kind: "AddOnDeploymentConfigList"},
	{Group: "addon.open-cluster-management.io", Version: "v1beta1", Kind: "AddOnTemplateList"},
	{Group: "work.open-cluster-management.io", Version: "v1", Kind: "ManifestWorkList"},
	{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequestList"},
}

// manager is the add-on's own manager on the hub.
type manager struct {
	c client.WithWatch
}

// newManager creates the manager's ServiceAccount in managerNS (which must
// exist) with its ClusterRole, as the add-on's installation does, and
// returns a manager authenticated as it. It waits until the manager can
// list and watch everything its informers hold.
func (r *selfRun) newManager(t *testing.T) *manager {
	t.Helper()
	r.create(t, r.hubC, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: managerSA}})
	r.create(t, r.hubC, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerAgent}, Rules: managerRules})
	r.create(t, r.hubC, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerAgent},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerAgent},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: managerNS, Name: managerSA}}})
	cfg, err := r.hub.ConfigForServiceAccount(r.ctx, managerNS, managerSA, time.Hour)
	kit.Must(t, "credentials of the add-on manager", err)
	cfg.UserAgent = managerAgent
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme})
	kit.Must(t, "client of the add-on manager", err)
	m := &manager{c: c}
	for _, gvk := range watched {
		r.poll(t, "the add-on manager lists and watches "+gvk.String(), func(ctx context.Context) (bool, error) {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk)
			if err := c.List(ctx, list); err != nil {
				return false, err
			}
			w, err := c.Watch(ctx, list)
			if err != nil {
				return false, err
			}
			w.Stop()
			return true, nil
		})
	}
	return m
}

// decidedClusters returns the clusters the add-on's Placement decides, read
// as the manager reads them: the Placement, then its PlacementDecisions by
// label, each cluster's ManagedCluster.
func (m *manager) decidedClusters(ctx context.Context, t *testing.T) []string {
	t.Helper()
	placement := newObject(clusterV1beta1, "Placement")
	kit.Must(t, "the manager reads Placement "+placementName, m.c.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: placementName}, placement))
	decisions := &unstructured.UnstructuredList{}
	decisions.SetAPIVersion(clusterV1beta1)
	decisions.SetKind("PlacementDecisionList")
	kit.Must(t, "the manager lists the PlacementDecisions", m.c.List(ctx, decisions, client.InNamespace(managerNS),
		client.MatchingLabels{"cluster.open-cluster-management.io/placement": placementName}))
	var clusters []string
	for _, d := range decisions.Items {
		list, _, err := unstructured.NestedSlice(d.Object, "status", "decisions")
		kit.Must(t, "read the decisions of "+d.GetName(), err)
		for _, item := range list {
			name, _, _ := unstructured.NestedString(item.(map[string]any), "clusterName")
			kit.Must(t, "the manager reads ManagedCluster "+name, m.c.Get(ctx, client.ObjectKey{Name: name}, newObject(clusterV1, "ManagedCluster")))
			clusters = append(clusters, name)
		}
	}
	return clusters
}

// get reads the manager's object of apiVersion and kind named key.
func (m *manager) get(ctx context.Context, t *testing.T, apiVersion, kind string, key client.ObjectKey) *unstructured.Unstructured {
	t.Helper()
	u := newObject(apiVersion, kind)
	kit.Must(t, "the manager reads "+kind+" "+key.String(), m.c.Get(ctx, key, u))
	return u
}

// updateStatus changes, as the manager, the status of its
// ManagedClusterAddOn of cluster at v1beta1, retrying conflicts with the
// agents, as addon-framework writes it: read, change, write.
func (m *manager) updateStatus(ctx context.Context, t *testing.T, cluster string, change func(status map[string]any)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mca := newObject(addonV1beta1, "ManagedClusterAddOn")
		if err := m.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addonName}, mca); err != nil {
			return err
		}
		status, _, err := unstructured.NestedMap(mca.Object, "status")
		if err != nil {
			return err
		}
		if status == nil {
			status = map[string]any{}
		}
		change(status)
		if err := unstructured.SetNestedMap(mca.Object, status, "status"); err != nil {
			return err
		}
		return m.c.Status().Update(ctx, mca)
	})
	kit.Must(t, "the manager writes the status of ManagedClusterAddOn "+cluster+"/"+addonName, err)
}

// setCondition sets cond in the conditions of a v1beta1 status, as
// meta.SetStatusCondition does on addon-framework's typed status.
func setCondition(t *testing.T, status map[string]any, cond metav1.Condition) {
	t.Helper()
	var conds []metav1.Condition
	if raw, ok := status["conditions"]; ok {
		data, err := json.Marshal(raw)
		kit.Must(t, "encode conditions", err)
		kit.Must(t, "decode conditions", json.Unmarshal(data, &conds))
	}
	meta.SetStatusCondition(&conds, cond)
	data, err := json.Marshal(conds)
	kit.Must(t, "encode conditions", err)
	var out []any
	kit.Must(t, "decode conditions", json.Unmarshal(data, &out))
	status["conditions"] = out
}

// newObject returns an empty object of apiVersion and kind.
func newObject(apiVersion, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// object parses the YAML format, filled with args, into an object.
func object(t *testing.T, format string, args ...any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	kit.Must(t, "parse object", yaml.Unmarshal([]byte(fmt.Sprintf(format, args...)), &u.Object))
	return u
}

// fragment parses the YAML format, filled with args, into a map.
func fragment(t *testing.T, format string, args ...any) map[string]any {
	t.Helper()
	out := map[string]any{}
	kit.Must(t, "parse fragment", yaml.Unmarshal([]byte(fmt.Sprintf(format, args...)), &out))
	return out
}

// nested returns the value at fields of obj, failing t when it is absent.
func nested(t *testing.T, obj map[string]any, fields ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil || !ok {
		t.Fatalf("field %v absent (%v)", fields, err)
	}
	return v
}
