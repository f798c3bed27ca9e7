package addonmanager

import (
	"context"
	"fmt"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// TestClusterAnnotationSync changes the add-on annotations of a cluster and
// follows them to the ManagedClusterAddOn of an add-on installed by
// Placements, but not to the one of a Manual add-on on the same cluster.
func TestClusterAnnotationSync(t *testing.T) {
	t.Parallel() // an environment of its own
	const (
		cluster   = "annotated"
		placed    = "placed-addon"
		manual    = "manual-addon"
		hosting   = "addon.open-cluster-management.io/hosting-cluster-name"
		extra     = "addon.open-cluster-management.io/extra"
		direct    = "addon.open-cluster-management.io/set-on-the-addon"
		unrelated = "example.com/unrelated"
	)
	s := setup(t)
	s.cluster(t, clusterSpec{name: cluster, claims: map[string]string{platformClaim: "sync"},
		annotations: map[string]string{hosting: "hub-a", unrelated: "x"}})
	s.apply(t, placementObject("placement-sync", "sync"))
	kit.Must(t, "create "+placed, s.admin.Create(s.ctx, &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: placed},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{
			Type:       addonv1alpha1.InstallStrategyPlacements,
			Placements: []addonv1alpha1.PlacementStrategy{{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "default", Name: "placement-sync"}}},
		}},
	}))
	kit.Must(t, "create "+manual, s.admin.Create(s.ctx, &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: manual},
		Spec:       addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}},
	}))
	kit.Must(t, "enable "+manual+" by hand", s.admin.Create(s.ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: manual, Annotations: map[string]string{direct: "manual"}}}))

	// want waits until the add-on annotations of the ManagedClusterAddOn of
	// addon are exactly want.
	want := func(t *testing.T, addon, what string, want map[string]string) {
		t.Helper()
		s.poll(t, addon+": "+what, func(ctx context.Context) (bool, error) {
			m := &addonv1alpha1.ManagedClusterAddOn{}
			if err := s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addon}, m); err != nil {
				return false, err
			}
			got := map[string]string{}
			for k, v := range m.Annotations {
				if k != addonv1alpha1.ClusterAnnotationsAnnotation && k != unrelated {
					got[k] = v
				}
			}
			if m.Annotations[unrelated] != "" {
				return false, fmt.Errorf("annotations %v: %s is not an add-on annotation", m.Annotations, unrelated)
			}
			if !maps.Equal(got, want) {
				return false, fmt.Errorf("annotations %v, want %v", m.Annotations, want)
			}
			return true, nil
		})
	}
	// annotate changes the annotations of the cluster.
	annotate := func(t *testing.T, change func(map[string]string)) {
		t.Helper()
		kit.Must(t, "annotate "+cluster, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := s.admin.Get(s.ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return err
			}
			change(mc.Annotations)
			return s.admin.Update(s.ctx, mc)
		}))
	}

	want(t, placed, "created with the cluster's add-on annotation", map[string]string{hosting: "hub-a"})
	// An add-on annotation set on the ManagedClusterAddOn itself stays
	// through every change below.
	kit.Must(t, "annotate "+placed, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &addonv1alpha1.ManagedClusterAddOn{}
		if err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: cluster, Name: placed}, m); err != nil {
			return err
		}
		m.Annotations[direct] = "mine"
		return s.admin.Update(s.ctx, m)
	}))

	annotate(t, func(a map[string]string) { a[hosting], a[extra] = "hub-b", "e" })
	want(t, placed, "changed and added", map[string]string{hosting: "hub-b", extra: "e", direct: "mine"})

	annotate(t, func(a map[string]string) { delete(a, hosting) })
	want(t, placed, "removed", map[string]string{extra: "e", direct: "mine"})

	annotate(t, func(a map[string]string) { delete(a, extra); a[unrelated] = "y" })
	want(t, placed, "the last one removed", map[string]string{direct: "mine"})
	m := &addonv1alpha1.ManagedClusterAddOn{}
	kit.Must(t, "read "+placed, s.admin.Get(s.ctx, client.ObjectKey{Namespace: cluster, Name: placed}, m))
	if v, ok := m.Annotations[addonv1alpha1.ClusterAnnotationsAnnotation]; ok {
		t.Errorf("%s = %q after the cluster dropped its add-on annotations, want it gone", addonv1alpha1.ClusterAnnotationsAnnotation, v)
	}

	// The Manual add-on never got any: checked after the other converged,
	// on the same cluster changes.
	want(t, manual, "untouched", map[string]string{direct: "manual"})
}
