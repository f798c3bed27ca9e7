package placement

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	// pollTimeout bounds every wait for the scheduler.
	pollTimeout = 60 * time.Second
	// platformClaim is the well-known platform claim.
	platformClaim = "platform.open-cluster-management.io"
)

// suite is the hub shared by every subtest. Each subtest works in its own
// namespace with its own exclusive cluster set and clusters, so that the
// subtests run in parallel without seeing each other's clusters.
type suite struct {
	admin client.Client
}

// setup starts a hub, installs what `hub init` installs and runs the
// placement scheduler in-process as the shipped ocm-hub-controller
// ServiceAccount, with the hub's cache restrictions.
func setup(t *testing.T) (*suite, context.Context) {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute)
	cluster := env.Cluster("hub")
	s := &suite{admin: cluster.Client()}
	hubtest.RunControllers(t, cluster, 1, placement.SetupWithManager)
	return s, ctx
}

// fixture creates namespace ns with an exclusive cluster set of the same
// name bound to it.
func (s *suite) fixture(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	kit.Must(t, "create namespace", s.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	kit.Must(t, "create set", s.admin.Create(ctx, newSet(ns)))
	s.bind(ctx, t, ns, ns)
}

// newSet returns an exclusive ManagedClusterSet name.
func newSet(name string) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// bind binds set to namespace ns.
func (s *suite) bind(ctx context.Context, t *testing.T, ns, set string) {
	t.Helper()
	kit.Must(t, "bind "+set, s.admin.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}))
}

// clusterSpec describes a ManagedCluster to create.
type clusterSpec struct {
	name   string
	labels map[string]string
	claims map[string]string
	taints []clusterv1.Taint
	cpu    string
}

// createCluster creates a ManagedCluster in set as the hub admin, then sets
// its claims and allocatable CPU in status, as an agent would.
func (s *suite) createCluster(ctx context.Context, t *testing.T, set string, c clusterSpec) {
	t.Helper()
	labels := map[string]string{clusterv1beta2.ClusterSetLabel: set}
	for k, v := range c.labels {
		labels[k] = v
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: labels},
		Spec:       clusterv1.ManagedClusterSpec{Taints: c.taints},
	}
	kit.Must(t, "create cluster "+c.name, s.admin.Create(ctx, mc))
	if len(c.claims) == 0 && c.cpu == "" {
		return
	}
	for _, k := range sortedKeys(c.claims) {
		mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: c.claims[k]})
	}
	if c.cpu != "" {
		mc.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse(c.cpu)}
	}
	kit.Must(t, "set status of cluster "+c.name, s.admin.Status().Update(ctx, mc))
}

// updateCluster changes the ManagedCluster name with change (spec and
// metadata, then status), retrying on conflicts.
func (s *suite) updateCluster(ctx context.Context, t *testing.T, name string, change func(*clusterv1.ManagedCluster)) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "update cluster "+name, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, err
		}
		change(mc)
		status := mc.Status.DeepCopy()
		if err := s.admin.Update(ctx, mc); err != nil {
			return false, err
		}
		mc.Status = *status
		return true, s.admin.Status().Update(ctx, mc)
	})
}

// score creates or updates the AddOnPlacementScore name of cluster with one
// score, creating the cluster namespace when needed.
func (s *suite) score(ctx context.Context, t *testing.T, cluster, name, scoreName string, value int32) {
	t.Helper()
	s.scoreUntil(ctx, t, cluster, name, scoreName, value, nil)
}

// scoreUntil is score with status.validUntil.
func (s *suite) scoreUntil(ctx context.Context, t *testing.T, cluster, name, scoreName string, value int32, validUntil *metav1.Time) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	if err := s.admin.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", cluster, err)
	}
	sc := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	framework.Eventually(ctx, t, pollTimeout, "score "+cluster+"/"+name, func(ctx context.Context) (bool, error) {
		err := s.admin.Get(ctx, client.ObjectKeyFromObject(sc), sc)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		if err != nil {
			sc = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
			if err := s.admin.Create(ctx, sc); err != nil {
				return false, err
			}
		}
		sc.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: scoreName, Value: value}}
		sc.Status.ValidUntil = validUntil
		return true, s.admin.Status().Update(ctx, sc)
	})
}

// createPlacement creates p.
func (s *suite) createPlacement(ctx context.Context, t *testing.T, p *clusterv1beta1.Placement) {
	t.Helper()
	kit.Must(t, "create placement "+p.Name, s.admin.Create(ctx, p))
}

// newPlacement returns a placement ns/name with spec.
func newPlacement(ns, name string, spec clusterv1beta1.PlacementSpec) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// updatePlacement changes the spec of placement ns/name with change.
func (s *suite) updatePlacement(ctx context.Context, t *testing.T, ns, name string, change func(*clusterv1beta1.Placement)) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "update placement "+name, func(ctx context.Context) (bool, error) {
		p := &clusterv1beta1.Placement{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, err
		}
		change(p)
		return true, s.admin.Update(ctx, p)
	})
}

// decisions lists the PlacementDecisions of placement ns/name, by name.
func (s *suite) decisions(ctx context.Context, ns, name string) ([]clusterv1beta1.PlacementDecision, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := s.admin.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// decided returns the sorted cluster names of the decisions of ns/name.
func (s *suite) decided(ctx context.Context, ns, name string) ([]string, error) {
	items, err := s.decisions(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range items {
		for _, c := range d.Status.Decisions {
			if c.ClusterName != "" {
				out = append(out, c.ClusterName)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// waitDecided waits until placement ns/name decides exactly want (in any
// order) and its status counts them.
func (s *suite) waitDecided(ctx context.Context, t *testing.T, ns, name string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("placement %s/%s decides %v", ns, name, want), func(ctx context.Context) (bool, error) {
		var err error
		if got, err = s.decided(ctx, ns, name); err != nil {
			return false, err
		}
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("decided %v", got)
		}
		p := &clusterv1beta1.Placement{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, err
		}
		if int(p.Status.NumberOfSelectedClusters) != len(want) {
			return false, fmt.Errorf("status.numberOfSelectedClusters %d", p.Status.NumberOfSelectedClusters)
		}
		return true, nil
	})
}

// waitCondition waits until the placement's condition typ has status and
// reason at its current generation, and returns the placement.
func (s *suite) waitCondition(ctx context.Context, t *testing.T, ns, name, typ string, status metav1.ConditionStatus, reason string) *clusterv1beta1.Placement {
	t.Helper()
	p := &clusterv1beta1.Placement{}
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("placement %s/%s %s=%s (%s)", ns, name, typ, status, reason), func(ctx context.Context) (bool, error) {
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, typ)
		if c == nil {
			return false, fmt.Errorf("no condition %s", typ)
		}
		if c.Status != status || c.Reason != reason || c.ObservedGeneration != p.Generation {
			return false, fmt.Errorf("condition %s=%s reason %s generation %d/%d: %s", typ, c.Status, c.Reason, c.ObservedGeneration, p.Generation, c.Message)
		}
		return true, nil
	})
	return p
}

// names returns prefix-1 … prefix-n.
func names(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// labelSelector returns a predicate selecting clusters with labels.
func labelSelector(labels map[string]string) clusterv1beta1.ClusterPredicate {
	return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: labels},
	}}
}
