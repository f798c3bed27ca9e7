package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testManagedNamespaces runs fleet namespaces through the hub controller and
// the agent: a set's spec.managedNamespaces become namespaces on its member
// cluster, labeled with the hub's hash and reported available on the
// ManagedCluster; one that existed is adopted; once the set stops asking, an
// empty one is deleted and one holding an object of its own is kept,
// relabeled false and reported.
func testManagedNamespaces(ctx context.Context, t *testing.T, s *suite) {
	key := clusterv1.ManagedNamespaceLabelKey(kubeconfig.HubHash(s.hub.Server()))
	// team-b exists already, with an object the agent must not lose.
	kit.MustCreate(ctx, t, s.spokeC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}})
	kit.MustCreate(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "settings"}})

	set := &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet"},
		Spec:       clusterv1beta2.ManagedClusterSetSpec{ManagedNamespaces: []clusterv1.ManagedNamespaceConfig{{Name: "team-a"}, {Name: "team-b"}}},
	}
	kit.MustCreate(ctx, t, s.hubC, set)
	mc, err := managedCluster(ctx, s.hubC)
	if err != nil {
		t.Fatal(err)
	}
	base := mc.DeepCopy()
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	mc.Labels[clusterv1beta2.ClusterSetLabel] = "fleet"
	if err := s.hubC.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}

	framework.Eventually(ctx, t, pollTimeout, "team-a and team-b labeled "+key+"=true on the managed cluster and reported available", func(ctx context.Context) (bool, error) {
		for _, name := range []string{"team-a", "team-b"} {
			ns := &corev1.Namespace{}
			if err := s.spokeC.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if ns.Labels[key] != "true" {
				return false, fmt.Errorf("namespace %s has labels %v", name, ns.Labels)
			}
		}
		mc, err := managedCluster(ctx, s.hubC)
		if err != nil {
			return false, err
		}
		var got []string
		for _, e := range mc.Status.ManagedNamespaces {
			if e.ClusterSet == "fleet" && meta.IsStatusConditionTrue(e.Conditions, clusterv1.ManagedNamespaceConditionAvailable) {
				got = append(got, e.Name)
			}
		}
		if strings.Join(got, ",") != "team-a,team-b" {
			return false, fmt.Errorf("available managed namespaces %v, status %+v", got, mc.Status.ManagedNamespaces)
		}
		return true, nil
	})

	setBase := set.DeepCopy()
	set.Spec.ManagedNamespaces = nil
	if err := s.hubC.Patch(ctx, set, client.MergeFrom(setBase)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "team-a deleted, team-b kept labeled false and reported retained", func(ctx context.Context) (bool, error) {
		a := &corev1.Namespace{}
		err := s.spokeC.Get(ctx, types.NamespacedName{Name: "team-a"}, a)
		if err == nil && a.DeletionTimestamp == nil {
			return false, fmt.Errorf("namespace team-a is still there")
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		b := &corev1.Namespace{}
		if err := s.spokeC.Get(ctx, types.NamespacedName{Name: "team-b"}, b); err != nil {
			return false, err
		}
		if b.DeletionTimestamp != nil || b.Labels[key] != "false" || !strings.Contains(b.Annotations[clusterv1.RetainedObjectsAnnotationKey], "configmaps/settings") {
			return false, fmt.Errorf("namespace team-b: deleting %v, labels %v, annotations %v", b.DeletionTimestamp != nil, b.Labels, b.Annotations)
		}
		mc, err := managedCluster(ctx, s.hubC)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionManagedNamespacesRetained)
		if len(mc.Status.ManagedNamespaces) != 0 || c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "team-b") {
			return false, fmt.Errorf("managed namespaces %v, condition %v", mc.Status.ManagedNamespaces, c)
		}
		return true, nil
	})
	cm := &corev1.ConfigMap{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "team-b", Name: "settings"}, cm); err != nil {
		t.Errorf("the object of the kept namespace: %v", err)
	}
}
