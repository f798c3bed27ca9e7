package selfmanaged

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// witnessName is an add-on the hub's add-on manager manages, installed by
// the same Placement: once it is installed, configured and rolled out, the
// hub's add-on manager has seen the Placement and the self-managed add-on.
const witnessName = "witness"

// TestSelfManagedAddon follows an add-on whose manager runs on the hub, as
// addon-framework's managers do, from its ClusterManagementAddOn at v1beta1
// to an agent that authenticates to the hub with the credential our agent
// obtains for it and is reported Available through its Lease, and back.
func TestSelfManagedAddon(t *testing.T) {
	r := setup(t)
	r.createPlacement(t)
	r.m = r.newManager(t)
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"ClusterManagementAddOn at v1beta1", r.testClusterManagementAddOn},
		{"ManagedClusterAddOn", r.testManagedClusterAddOn},
		{"registrations and deploy work", r.testRegistrations},
		{"CSR approved", r.testRequestApproved},
		{"hub kubeconfig on the managed cluster", r.testCredentialSecret},
		{"add-on agent authenticates", r.testAgentAuthenticates},
		{"lease health", r.testLease},
		{"left alone by the hub's add-on manager", r.testLeftAlone},
		{"read through the v1alpha1 types", r.testV1alpha1View},
		{"delete", r.testDelete},
	}
	for _, st := range steps {
		if !t.Run(st.name, st.run) {
			t.FailNow() // each step builds on the one before
		}
	}
}

// createPlacement creates, as the admin, namespace managerNS, the AddOnDeploymentConfig of the
// add-on's defaultConfigs and its install Placement deciding cluster1, with
// the PlacementDecision the placement controller would write.
func (r *selfRun) createPlacement(t *testing.T) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNS}}
	if err := r.hubC.Create(r.ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", managerNS, err)
	}
	r.create(t, r.hubC, object(t, `
apiVersion: addon.open-cluster-management.io/v1beta1
kind: AddOnDeploymentConfig
metadata: {namespace: %s, name: %s}
spec: {}`, managerNS, configName))
	r.create(t, r.hubC, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: placementName}})
	decision := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: placementName + "-decision-0",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placementName, clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
	r.create(t, r.hubC, decision)
	decision.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: clusterName}}
	kit.Must(t, "write the decisions of "+placementName, r.hubC.Status().Update(r.ctx, decision))
}

// testClusterManagementAddOn: the manager creates its ClusterManagementAddOn
// at v1beta1, lifecycle self, installed by Placement. Once the hub's add-on
// manager has installed, configured and rolled out the witness add-on of
// the same Placement, the self-managed one has no ManagedClusterAddOn from
// it and its ClusterManagementAddOn is as the manager wrote it.
func (r *selfRun) testClusterManagementAddOn(t *testing.T) {
	cma := object(t, `
apiVersion: addon.open-cluster-management.io/v1beta1
kind: ClusterManagementAddOn
metadata:
  name: %[1]s
  annotations:
    addon.open-cluster-management.io/lifecycle: self
spec:
  addOnMeta:
    displayName: %[1]s
    description: helloworld is an example addon built on addon-framework
  defaultConfigs:
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
    namespace: %[2]s
    name: %[3]s
  installStrategy:
    type: Placements
    placements:
    - namespace: %[2]s
      name: %[4]s`, addonName, managerNS, configName, placementName)
	r.create(t, r.m.c, cma)
	wantSpec := cma.Object["spec"] // as created, with the CRD's defaults (rolloutStrategy All)
	r.cmaUID = string(cma.GetUID())

	witness := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: witnessName},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{ConfigGroupResource: adcResource(),
				DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: managerNS, Name: configName}}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements,
				Placements: []addonv1alpha1.PlacementStrategy{{PlacementRef: addonv1alpha1.PlacementRef{Namespace: managerNS, Name: placementName}}}},
		}}
	r.create(t, r.hubC, witness)
	r.poll(t, "the witness add-on installed, configured and rolled out", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := r.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: witnessName}, mca); err != nil {
			return false, err
		}
		if err := r.hubC.Get(ctx, client.ObjectKey{Name: witnessName}, witness); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured) &&
			len(witness.Status.DefaultConfigReferences) > 0, nil
	})

	list := &addonv1alpha1.ManagedClusterAddOnList{}
	kit.Must(t, "list ManagedClusterAddOns", r.hubC.List(r.ctx, list))
	for _, mca := range list.Items {
		if mca.Name == addonName {
			t.Errorf("the hub installed the self-managed add-on in %s", mca.Namespace)
		}
	}
	got := r.m.get(r.ctx, t, addonV1beta1, "ClusterManagementAddOn", client.ObjectKey{Name: addonName})
	if !equality.Semantic.DeepEqual(got.Object["spec"], wantSpec) {
		t.Errorf("spec %v, want the manager's %v", got.Object["spec"], wantSpec)
	}
	if st, _, _ := unstructured.NestedMap(got.Object, "status"); len(st) > 0 {
		t.Errorf("the hub wrote the status of the self-managed ClusterManagementAddOn: %v", st)
	}
	if want := map[string]string{"addon.open-cluster-management.io/lifecycle": "self"}; !equality.Semantic.DeepEqual(got.GetAnnotations(), want) {
		t.Errorf("annotations %v, want %v", got.GetAnnotations(), want)
	}
	if len(got.GetFinalizers()) > 0 || len(got.GetOwnerReferences()) > 0 {
		t.Errorf("finalizers %v, owners %v on the manager's ClusterManagementAddOn", got.GetFinalizers(), got.GetOwnerReferences())
	}

	typed := &addonv1alpha1.ClusterManagementAddOn{}
	kit.Must(t, "read the ClusterManagementAddOn at v1alpha1", r.hubC.Get(r.ctx, client.ObjectKey{Name: addonName}, typed))
	wantConfigs := []addonv1alpha1.ConfigMeta{{ConfigGroupResource: adcResource(),
		DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: managerNS, Name: configName}}}
	if addonv1alpha1.ManagedByAddonManager(typed.Annotations) || !equality.Semantic.DeepEqual(typed.Spec.SupportedConfigs, wantConfigs) {
		t.Errorf("at v1alpha1: annotations %v, supportedConfigs %+v; want lifecycle self and %+v", typed.Annotations, typed.Spec.SupportedConfigs, wantConfigs)
	}
}

// testManagedClusterAddOn: the manager installs its add-on on the clusters
// its Placement decides, creating the ManagedClusterAddOn at v1beta1 owned
// by its ClusterManagementAddOn; the hub reads it back at v1alpha1.
func (r *selfRun) testManagedClusterAddOn(t *testing.T) {
	clusters := r.m.decidedClusters(r.ctx, t)
	if len(clusters) != 1 || clusters[0] != clusterName {
		t.Fatalf("the Placement decides %v, want [%s]", clusters, clusterName)
	}
	r.create(t, r.m.c, object(t, `
apiVersion: addon.open-cluster-management.io/v1beta1
kind: ManagedClusterAddOn
metadata:
  namespace: %s
  name: %s
  ownerReferences:
  - apiVersion: addon.open-cluster-management.io/v1beta1
    kind: ClusterManagementAddOn
    name: %s
    uid: %s
    controller: true
    blockOwnerDeletion: true
spec: {}`, clusterName, addonName, addonName, r.cmaUID))

	mca := &addonv1alpha1.ManagedClusterAddOn{}
	kit.Must(t, "read the ManagedClusterAddOn at v1alpha1", r.hubC.Get(r.ctx, client.ObjectKey{Namespace: clusterName, Name: addonName}, mca))
	if owner := metav1.GetControllerOf(mca); owner == nil || string(owner.UID) != r.cmaUID || mca.AgentInstallNamespace() != installNS {
		t.Errorf("at v1alpha1: controller %+v, install namespace %s; want the ClusterManagementAddOn, %s", owner, mca.AgentInstallNamespace(), installNS)
	}
}

// testRegistrations: the manager grants its agent read on the ConfigMaps of
// cluster1's namespace, writes the status addon-framework writes (supported
// configs, registrations with OCM's default subject, namespace, Lease
// health, RegistrationApplied) and its deploy work, and reports
// ManifestApplied once our work agent applied it.
func (r *selfRun) testRegistrations(t *testing.T) {
	r.create(t, r.m.c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: agentHubRole},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}})
	r.create(t, r.m.c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: agentHubRole},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: agentHubRole},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: addonGroup()}}})
	r.m.updateStatus(r.ctx, t, clusterName, func(status map[string]any) {
		for k, v := range managerStatus(t) {
			status[k] = v
		}
		setCondition(t, status, metav1.Condition{Type: "RegistrationApplied", Status: metav1.ConditionTrue,
			Reason: "SetPermissionApplied", Message: "Registration of the addon agent is configured"})
	})

	mca := r.m.get(r.ctx, t, addonV1beta1, "ManagedClusterAddOn", client.ObjectKey{Namespace: clusterName, Name: addonName})
	r.create(t, r.m.c, deployWorkObject(t, mca.GetUID()))
	r.poll(t, "ManifestWork "+deployWork+" applied", func(ctx context.Context) (bool, error) {
		work := newObject(workV1, "ManifestWork")
		if err := r.m.c.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: deployWork}, work); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(work.Object, "status", "conditions")
		for _, c := range conds {
			c := c.(map[string]any)
			if c["type"] == "Applied" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	r.m.updateStatus(r.ctx, t, clusterName, func(status map[string]any) {
		setCondition(t, status, metav1.Condition{Type: "ManifestApplied", Status: metav1.ConditionTrue,
			Reason: "AddonManifestApplied", Message: "manifests of addon are applied successfully"})
	})
	r.waitCondition(t, addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
}

// adcResource is the AddOnDeploymentConfig kind.
func adcResource() addonv1alpha1.ConfigGroupResource {
	return addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
}
