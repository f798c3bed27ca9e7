package selfmanaged

import (
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// managerConditions are the conditions the manager wrote, with the reasons
// it gave; agentConditions those our agent adds to a self-managed add-on.
var (
	managerConditions = map[string]string{"RegistrationApplied": "SetPermissionApplied", "ManifestApplied": "AddonManifestApplied"}
	agentConditions   = []string{"ClusterCertificateRotated", "Available"}
)

// testLeftAlone: after the whole sequence the ManagedClusterAddOn, read at
// v1beta1 by the manager, holds what the manager wrote and what our agent
// reports (the kubeClient driver, its conditions) and nothing of the hub's
// add-on manager; the add-on has no other ManagedClusterAddOn, no work,
// RoleBinding or token ServiceAccount of the hub's, and its
// ClusterManagementAddOn no status.
func (r *selfRun) testLeftAlone(t *testing.T) {
	mca := r.m.get(r.ctx, t, addonV1beta1, "ManagedClusterAddOn", client.ObjectKey{Namespace: clusterName, Name: addonName})
	if len(mca.GetAnnotations()) > 0 || len(mca.GetFinalizers()) > 0 || len(mca.GetLabels()) > 0 {
		t.Errorf("annotations %v, finalizers %v, labels %v on the manager's ManagedClusterAddOn", mca.GetAnnotations(), mca.GetFinalizers(), mca.GetLabels())
	}
	if owners := mca.GetOwnerReferences(); len(owners) != 1 || string(owners[0].UID) != r.cmaUID {
		t.Errorf("owners %+v, want the manager's ClusterManagementAddOn only", owners)
	}
	status := mca.Object["status"].(map[string]any)
	want := managerStatus(t)
	unstructured.RemoveNestedField(want, "registrations") // compared below, with the driver
	for field, value := range want {
		if !equality.Semantic.DeepEqual(status[field], value) {
			t.Errorf("status.%s %v, want the manager's %v", field, status[field], value)
		}
	}
	regs := nested(t, status, "registrations").([]any)
	wantReg := managerStatus(t)["registrations"].([]any)[0].(map[string]any)
	kit.Must(t, "set the driver", unstructured.SetNestedField(wantReg, "csr", "kubeClient", "driver"))
	if len(regs) != 1 || !equality.Semantic.DeepEqual(regs[0], wantReg) {
		t.Errorf("status.registrations %v, want the manager's with our agent's driver: %v", regs, wantReg)
	}
	for field := range status {
		if empty, ok := status[field].(map[string]any); ok && len(empty) == 0 {
			continue // a typed writer's zero struct (addOnMeta: {}), as OCM's typed clients write it too
		}
		if _, ok := want[field]; !ok && field != "registrations" && field != "conditions" {
			t.Errorf("status.%s written on a self-managed add-on: %v", field, status[field])
		}
	}
	r.checkConditions(t, status["conditions"].([]any))

	list := &addonv1alpha1.ManagedClusterAddOnList{}
	kit.Must(t, "list ManagedClusterAddOns", r.hubC.List(r.ctx, list))
	for _, other := range list.Items {
		if other.Name == addonName && other.Namespace != clusterName {
			t.Errorf("the hub installed the self-managed add-on in %s", other.Namespace)
		}
	}
	works := &unstructured.UnstructuredList{}
	works.SetAPIVersion(workV1)
	works.SetKind("ManifestWorkList")
	kit.Must(t, "list the add-on's works", r.m.c.List(r.ctx, works, client.MatchingLabels{"open-cluster-management.io/addon-name": addonName}))
	for _, w := range works.Items {
		manifests, _, _ := unstructured.NestedSlice(w.Object, "spec", "workload", "manifests")
		if w.GetNamespace() != clusterName || w.GetName() != deployWork || len(w.GetLabels()) != 1 || len(w.GetAnnotations()) > 0 || len(manifests) != 4 {
			t.Errorf("work %s/%s (labels %v, annotations %v, %d manifests) is not the manager's", w.GetNamespace(), w.GetName(), w.GetLabels(), w.GetAnnotations(), len(manifests))
		}
	}
	bindings := &rbacv1.RoleBindingList{}
	kit.Must(t, "list RoleBindings of "+clusterName, r.hubC.List(r.ctx, bindings, client.InNamespace(clusterName)))
	for _, b := range bindings.Items {
		if b.Name != agentHubRole && b.Name != "open-cluster-management:"+addonName {
			continue
		}
		if b.Name != agentHubRole || len(b.Labels) > 0 || len(b.OwnerReferences) > 0 {
			t.Errorf("RoleBinding %s (labels %v, owners %v) is not the manager's", b.Name, b.Labels, b.OwnerReferences)
		}
	}
	err := r.hubC.Get(r.ctx, client.ObjectKey{Namespace: clusterName, Name: addonName + "-agent"}, &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("token ServiceAccount %s-agent of a csr-driver add-on: %v", addonName, err)
	}
	cma := r.m.get(r.ctx, t, addonV1beta1, "ClusterManagementAddOn", client.ObjectKey{Name: addonName})
	if st, _, _ := unstructured.NestedMap(cma.Object, "status"); len(st) > 0 {
		t.Errorf("the hub wrote the status of the self-managed ClusterManagementAddOn: %v", st)
	}
}

// checkConditions checks that conds holds the manager's conditions as it
// wrote them, our agent's, and no other.
func (r *selfRun) checkConditions(t *testing.T, conds []any) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range conds {
		c := c.(map[string]any)
		typ, _ := c["type"].(string)
		seen[typ] = true
		if reason, ok := managerConditions[typ]; ok {
			if c["reason"] != reason || c["status"] != "True" {
				t.Errorf("condition %s: %v, want the manager's True %s", typ, c, reason)
			}
			continue
		}
		if !slices.Contains(agentConditions, typ) {
			t.Errorf("condition %s written on a self-managed add-on: %v", typ, c)
		}
	}
	for typ := range managerConditions {
		if !seen[typ] {
			t.Errorf("the manager's condition %s is gone", typ)
		}
	}
}

// testV1alpha1View reads the ManagedClusterAddOn the manager wrote at
// v1beta1 through the project's v1alpha1 types, as every hub controller
// and agent does, and checks every field they use.
func (r *selfRun) testV1alpha1View(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	kit.Must(t, "read the ManagedClusterAddOn at v1alpha1", r.hubC.Get(r.ctx, client.ObjectKey{Namespace: clusterName, Name: addonName}, mca))
	want := addonv1alpha1.ManagedClusterAddOnStatus{
		SupportedConfigs: []addonv1alpha1.ConfigGroupResource{adcResource()},
		RelatedObjects:   []addonv1alpha1.ObjectReference{{Group: "addon.open-cluster-management.io", Resource: "clustermanagementaddons", Name: addonName}},
		Namespace:        installNS,
		Registrations: []addonv1alpha1.RegistrationConfig{{SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Subject: addonv1alpha1.Subject{User: addonUser(), Groups: []string{addonGroup(), "system:open-cluster-management:addon:" + addonName}}}},
		HealthCheck:      addonv1alpha1.HealthCheck{Mode: addonv1alpha1.HealthCheckModeLease},
		KubeClientDriver: addonv1alpha1.KubeClientDriverCSR,
	}
	got := mca.Status.DeepCopy()
	got.Conditions = nil
	if !equality.Semantic.DeepEqual(*got, want) {
		t.Errorf("status at v1alpha1:\n%+v\nwant\n%+v", *got, want)
	}
	if mca.AgentInstallNamespace() != installNS || len(mca.Annotations) > 0 {
		t.Errorf("install namespace %s, annotations %v; want %s, none", mca.AgentInstallNamespace(), mca.Annotations, installNS)
	}
	if owner := metav1.GetControllerOf(mca); owner == nil || string(owner.UID) != r.cmaUID {
		t.Errorf("controller %+v, want the ClusterManagementAddOn", owner)
	}
	for typ, reason := range managerConditions {
		if c := meta.FindStatusCondition(mca.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			t.Errorf("condition %s at v1alpha1: %+v, want True %s", typ, c, reason)
		}
	}
}
