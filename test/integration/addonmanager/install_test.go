package addonmanager

import (
	"context"
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

const (
	// platformClaim is the claim the seeds' placement selects on.
	platformClaim = "platform.open-cluster-management.io"
	// copiedAnnotation is a cluster annotation copied to the add-ons created for it.
	copiedAnnotation = "addon.open-cluster-management.io/test-annotation"
)

// TestInstallStrategies covers the Manual and Placements install strategies,
// ownership, a cluster leaving, a missing placement, the
// disable-automatic-installation annotation, and the garbage collection of
// the add-on's ManagedClusterAddOns when its ClusterManagementAddOn is deleted.
func TestInstallStrategies(t *testing.T) {
	t.Parallel() // an environment of its own
	s := setup(t)
	s.cluster(t, clusterSpec{name: "cluster1", claims: map[string]string{platformClaim: "aws"},
		annotations: map[string]string{copiedAnnotation: "copied", "agent.open-cluster-management.io/other": "not copied"}})
	s.cluster(t, clusterSpec{name: "cluster2", claims: map[string]string{platformClaim: "gcp"}})
	s.cluster(t, clusterSpec{name: "cluster3"})
	s.cluster(t, clusterSpec{name: "cluster4", claims: map[string]string{platformClaim: "aws"}})

	t.Run("manual", func(t *testing.T) {
		s.applySeed(t, "001-clustermanagementaddon-basic.yaml")
		s.applySeed(t, "001-managedclusteraddon-manual.yaml")
		cma := s.waitCMA(t, "exists", func(*addonv1alpha1.ClusterManagementAddOn) error { return nil })
		s.waitMCA(t, "cluster1", "owned by its ClusterManagementAddOn, configured, waiting for its manifests", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			if err := ownedBy(m, cma, false); err != nil {
				return err
			}
			if err := condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured,
				metav1.ConditionTrue, addonv1alpha1.ConfiguredReasonConfigured); err != nil {
				return err
			}
			return condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing,
				metav1.ConditionFalse, addonv1alpha1.ProgressingReasonWaitingForManifestApplied)
		})
		for _, c := range []string{"cluster2", "cluster3", "cluster4"} {
			if _, err := s.mca(s.ctx, c); !apierrors.IsNotFound(err) {
				t.Errorf("the Manual strategy installed the add-on on %s (%v)", c, err)
			}
		}
		s.deleteCMA(t)
		s.waitGone(t, "cluster1")
	})

	t.Run("placements", func(t *testing.T) {
		s.applySeed(t, "001-installstrategy-placements.yaml")
		cma := s.waitCMA(t, "exists", func(*addonv1alpha1.ClusterManagementAddOn) error { return nil })
		s.waitMCA(t, "cluster1", "created, controlled by the ClusterManagementAddOn, with the cluster's add-on annotations", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			if err := ownedBy(m, cma, true); err != nil {
				return err
			}
			if m.Annotations[copiedAnnotation] != "copied" || m.Annotations["agent.open-cluster-management.io/other"] != "" {
				return fmt.Errorf("annotations %v: want only the add-on annotations of the cluster", m.Annotations)
			}
			return nil
		})
		s.waitMCA(t, "cluster4", "created", func(m *addonv1alpha1.ManagedClusterAddOn) error { return ownedBy(m, cma, true) })

		// A second placement installs on cluster2; cluster3 stays without.
		s.apply(t, placementObject("placement-gcp", "gcp"), cmaObject(t, "placement-aws", "placement-gcp"))
		s.waitMCA(t, "cluster2", "created by the second placement", func(m *addonv1alpha1.ManagedClusterAddOn) error { return ownedBy(m, cma, true) })
		s.waitCMA(t, "two install progressions", func(c *addonv1alpha1.ClusterManagementAddOn) error {
			if len(c.Status.InstallProgressions) != 2 {
				return fmt.Errorf("installProgressions %+v", c.Status.InstallProgressions)
			}
			return nil
		})
		if _, err := s.mca(s.ctx, "cluster3"); !apierrors.IsNotFound(err) {
			t.Errorf("cluster3 is decided by no placement but has the add-on (%v)", err)
		}

		// A hand-made ManagedClusterAddOn is owned, not controlled, and stays.
		kit.Must(t, "enable the add-on on cluster3 by hand", s.admin.Create(s.ctx, &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cluster3", Name: addon}}))
		s.waitMCA(t, "cluster3", "owned by its ClusterManagementAddOn", func(m *addonv1alpha1.ManagedClusterAddOn) error { return ownedBy(m, cma, false) })

		// cluster2 leaves its placement: its add-on goes.
		s.updateCluster(t, "cluster2", func(mc *clusterv1.ManagedCluster) {
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: platformClaim, Value: "azure"}}
		})
		s.waitGone(t, "cluster2")

		// A missing placement decides nothing: cluster4's add-on goes, the
		// one of cluster1 stays because its automatic installation is disabled.
		m, err := s.mca(s.ctx, "cluster1")
		kit.Must(t, "read the add-on of cluster1", err)
		m.Annotations[addonv1alpha1.DisableAddonAutomaticInstallationAnnotationKey] = "true"
		kit.Must(t, "disable the automatic installation on cluster1", s.admin.Update(s.ctx, m))
		kit.Must(t, "delete placement-aws", s.admin.Delete(s.ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "placement-aws"}}))
		s.waitGone(t, "cluster4")
		if _, err := s.mca(s.ctx, "cluster1"); err != nil {
			t.Errorf("the add-on of cluster1, whose automatic installation is disabled, was removed: %v", err)
		}
		s.waitCMA(t, "the missing placement reported", func(c *addonv1alpha1.ClusterManagementAddOn) error {
			cond, err := progression(c, "placement-aws")
			if err != nil {
				return err
			}
			if cond.Reason != config.ReasonPlacementNotFound || !strings.Contains(cond.Message, "default/placement-aws") {
				return fmt.Errorf("progression of placement-aws: %+v", cond)
			}
			return nil
		})
		s.poll(t, "a PlacementNotFound event", func(ctx context.Context) (bool, error) {
			return s.hasEvent(ctx, config.ReasonPlacementNotFound)
		})

		// The placement comes back: so does cluster4's add-on.
		s.applySeed(t, "001-installstrategy-placements.yaml")
		s.waitMCA(t, "cluster4", "created again", func(m *addonv1alpha1.ManagedClusterAddOn) error { return ownedBy(m, cma, true) })

		// Deleting the ClusterManagementAddOn removes every ManagedClusterAddOn.
		s.deleteCMA(t)
		for _, c := range []string{"cluster1", "cluster3", "cluster4"} {
			s.waitGone(t, c)
		}
	})
}

// ownedBy returns an error unless m has an owner reference to cma whose
// controller flag is controller.
func ownedBy(m *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn, controller bool) error {
	for _, ref := range m.OwnerReferences {
		if ref.UID == cma.UID && ref.Kind == "ClusterManagementAddOn" && ref.Name == cma.Name {
			if (ref.Controller != nil && *ref.Controller) != controller {
				return fmt.Errorf("owner reference %+v: want controller %v", ref, controller)
			}
			return nil
		}
	}
	return fmt.Errorf("no owner reference to ClusterManagementAddOn %s in %+v", cma.Name, m.OwnerReferences)
}

// deleteCMA deletes the add-on's ClusterManagementAddOn and waits until it is gone.
func (s *suite) deleteCMA(t *testing.T) {
	t.Helper()
	kit.Must(t, "delete the ClusterManagementAddOn", s.admin.Delete(s.ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon}}))
	s.poll(t, "ClusterManagementAddOn gone", func(ctx context.Context) (bool, error) {
		err := s.admin.Get(ctx, client.ObjectKey{Name: addon}, &addonv1alpha1.ClusterManagementAddOn{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// hasEvent reports whether an event of reason was recorded about the add-on's
// ClusterManagementAddOn.
func (s *suite) hasEvent(ctx context.Context, reason string) (bool, error) {
	list := &eventsv1.EventList{}
	if err := s.admin.List(ctx, list); err != nil {
		return false, err
	}
	for _, e := range list.Items {
		if e.Reason == reason && e.Regarding.Kind == "ClusterManagementAddOn" && e.Regarding.Name == addon {
			return true, nil
		}
	}
	return false, nil
}

// placementObject is a Placement in default selecting the clusters whose
// platform claim is platform, shaped as the seed's placement-aws.
func placementObject(name, platform string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1beta1.GroupVersion.String(), "kind": "Placement",
		"metadata": map[string]any{"namespace": "default", "name": name},
		"spec": map[string]any{"predicates": []any{map[string]any{"requiredClusterSelector": map[string]any{
			"claimSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key": platformClaim, "operator": "In", "values": []any{platform},
			}}},
		}}}},
	}}
}

// cmaObject is the add-on's ClusterManagementAddOn of the seed
// 001-installstrategy-placements with the install placements named.
func cmaObject(t *testing.T, placements ...string) *unstructured.Unstructured {
	t.Helper()
	var ps []any
	for _, p := range placements {
		ps = append(ps, map[string]any{"namespace": "default", "name": p})
	}
	for _, u := range seeds.Read(t, "001-installstrategy-placements.yaml") {
		if u.GetKind() == "ClusterManagementAddOn" {
			kit.Must(t, "set the placements", unstructured.SetNestedSlice(u.Object, ps, "spec", "installStrategy", "placements"))
			return u
		}
	}
	t.Fatal("the seed 001-installstrategy-placements.yaml has no ClusterManagementAddOn")
	return nil
}
