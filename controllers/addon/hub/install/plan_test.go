package install

import (
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

const cmaUID = types.UID("cma-uid")

// newCMA builds the ClusterManagementAddOn helloworld with an install strategy type.
func newCMA(strategy string) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "helloworld", UID: cmaUID},
		Spec:       addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: strategy}},
	}
}

// mcaOpt changes a ManagedClusterAddOn built by mca.
type mcaOpt func(*addonv1alpha1.ManagedClusterAddOn)

// mca builds the ManagedClusterAddOn helloworld in cluster.
func mca(cluster string, opts ...mcaOpt) addonv1alpha1.ManagedClusterAddOn {
	m := addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "helloworld", Namespace: cluster}}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// owned adds an owner reference to the ClusterManagementAddOn.
func owned(controller bool) mcaOpt {
	return func(m *addonv1alpha1.ManagedClusterAddOn) {
		m.OwnerReferences = append(m.OwnerReferences, ownerRef(newCMA(""), controller))
	}
}

// annotated adds an annotation.
func annotated(k, v string) mcaOpt {
	return func(m *addonv1alpha1.ManagedClusterAddOn) { m.Annotations = map[string]string{k: v} }
}

// deleting marks the object deleted.
func deleting(m *addonv1alpha1.ManagedClusterAddOn) { now := metav1.Now(); m.DeletionTimestamp = &now }

// ready is the target of a cluster that may get the add-on.
func ready(name string) target {
	return target{cluster: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, namespace: &corev1.Namespace{}}
}

// namespaces returns the namespaces of mcas.
func namespaces(mcas []*addonv1alpha1.ManagedClusterAddOn) []string {
	out := []string{}
	for _, m := range mcas {
		out = append(out, m.Namespace)
	}
	sort.Strings(out)
	return out
}

func TestPlan(t *testing.T) {
	terminating := ready("c2")
	terminating.namespace.Status.Phase = corev1.NamespaceTerminating
	leaving := ready("c3")
	now := metav1.Now()
	leaving.cluster.DeletionTimestamp = &now
	disabled := annotated(addonv1alpha1.DisableAddonAutomaticInstallationAnnotationKey, "true")
	tests := []struct {
		name     string
		strategy string
		mcas     []addonv1alpha1.ManagedClusterAddOn
		decided  []string
		targets  map[string]target
		own      []string
		create   []string
		remove   []string
		waiting  []string
	}{
		{name: "manual: owner references only", strategy: addonv1alpha1.InstallStrategyManual,
			mcas: []addonv1alpha1.ManagedClusterAddOn{mca("c1"), mca("c2", owned(false)), mca("c3", deleting)},
			own:  []string{"c1"}},
		{name: "placements: create for decided clusters without one", strategy: addonv1alpha1.InstallStrategyPlacements,
			mcas:    []addonv1alpha1.ManagedClusterAddOn{mca("c1", owned(true))},
			decided: []string{"c1", "c2", "c3"}, targets: map[string]target{"c2": ready("c2"), "c3": ready("c3")},
			create: []string{"c2", "c3"}},
		{name: "placements: remove only the undecided ones it created", strategy: addonv1alpha1.InstallStrategyPlacements,
			mcas: []addonv1alpha1.ManagedClusterAddOn{
				mca("c1", owned(true)), mca("c2", owned(false)), mca("c3", owned(true), disabled), mca("c4", owned(true), deleting),
			},
			remove: []string{"c1"}},
		{name: "placements: clusters going away or without namespace wait", strategy: addonv1alpha1.InstallStrategyPlacements,
			decided: []string{"c1", "c2", "c3", "c4"},
			targets: map[string]target{"c1": {cluster: ready("c1").cluster}, "c2": terminating, "c3": leaving},
			waiting: []string{"c1", "c2", "c3", "c4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decided := map[string]bool{}
			for _, c := range tt.decided {
				decided[c] = true
			}
			a := plan(newCMA(tt.strategy), tt.mcas, decided, tt.targets)
			waiting := []string{}
			for c := range a.waiting {
				waiting = append(waiting, c)
			}
			sort.Strings(waiting)
			for _, check := range []struct {
				what      string
				got, want []string
			}{
				{"own", namespaces(a.own), tt.own}, {"create", append([]string{}, a.create...), tt.create},
				{"remove", namespaces(a.remove), tt.remove}, {"waiting", waiting, tt.waiting},
			} {
				want := append([]string{}, check.want...)
				if !reflect.DeepEqual(check.got, want) {
					t.Errorf("%s = %v, want %v", check.what, check.got, want)
				}
			}
		})
	}
}

func TestNewMCA(t *testing.T) {
	cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Annotations: map[string]string{
		"addon.open-cluster-management.io/hosted-manifest-location": "hosting",
		"agent.open-cluster-management.io/other":                    "x",
	}}}
	got := newMCA(newCMA(addonv1alpha1.InstallStrategyPlacements), cluster)
	if got.Namespace != "c1" || got.Name != "helloworld" {
		t.Errorf("created %s/%s, want c1/helloworld", got.Namespace, got.Name)
	}
	if want := map[string]string{
		"addon.open-cluster-management.io/hosted-manifest-location": "hosting",
		addonv1alpha1.ClusterAnnotationsAnnotation:                  "addon.open-cluster-management.io/hosted-manifest-location",
	}; !reflect.DeepEqual(got.Annotations, want) {
		t.Errorf("annotations = %v, want %v", got.Annotations, want)
	}
	if !isController(got, cmaUID) {
		t.Errorf("owner references %+v: the ClusterManagementAddOn is not the controller", got.OwnerReferences)
	}
}
