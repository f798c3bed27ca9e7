package placement

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// decisionsOf returns n decisions of clusters prefix-1 … prefix-n.
func decisionsOf(prefix string, n int) []clusterv1beta1.ClusterDecision {
	out := make([]clusterv1beta1.ClusterDecision, n)
	for i := range out {
		out[i] = clusterv1beta1.ClusterDecision{ClusterName: fmt.Sprintf("%s-%d", prefix, i+1)}
	}
	return out
}

func TestDesiredDecisions(t *testing.T) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	type page struct {
		name  string
		index int32
		group string
		count int
	}
	tests := []struct {
		name   string
		groups []placement.Group
		want   []page
		status []clusterv1beta1.DecisionGroupStatus
	}{
		{
			name:   "no group: one empty decision",
			want:   []page{{"p-decision-1", 0, "", 0}},
			status: []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{"p-decision-1"}}},
		},
		{
			name:   "one empty group",
			groups: []placement.Group{{}},
			want:   []page{{"p-decision-1", 0, "", 0}},
			status: []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{"p-decision-1"}}},
		},
		{
			name:   "250 clusters: three pages",
			groups: []placement.Group{{Decisions: decisionsOf("c", 250)}},
			want:   []page{{"p-decision-1", 0, "", 100}, {"p-decision-2", 0, "", 100}, {"p-decision-3", 0, "", 50}},
			status: []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{"p-decision-1", "p-decision-2", "p-decision-3"}, ClustersCount: 250}},
		},
		{
			name: "groups numbered on",
			groups: []placement.Group{
				{Index: 0, Name: "canary", Decisions: decisionsOf("a", 2)},
				{Index: 1, Name: "canary", Decisions: decisionsOf("b", 100)},
				{Index: 2, Decisions: decisionsOf("c", 101)},
			},
			want: []page{
				{"p-decision-1", 0, "canary", 2}, {"p-decision-2", 1, "canary", 100},
				{"p-decision-3", 2, "", 100}, {"p-decision-4", 2, "", 1},
			},
			status: []clusterv1beta1.DecisionGroupStatus{
				{DecisionGroupIndex: 0, DecisionGroupName: "canary", Decisions: []string{"p-decision-1"}, ClustersCount: 2},
				{DecisionGroupIndex: 1, DecisionGroupName: "canary", Decisions: []string{"p-decision-2"}, ClustersCount: 100},
				{DecisionGroupIndex: 2, Decisions: []string{"p-decision-3", "p-decision-4"}, ClustersCount: 101},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := desiredDecisions(p, tt.groups)
			var pages []page
			for _, d := range got {
				if d.decisions == nil {
					t.Errorf("%s: nil decisions; the status field needs a list", d.name)
				}
				pages = append(pages, page{d.name, d.groupIndex, d.groupName, len(d.decisions)})
			}
			if !reflect.DeepEqual(pages, tt.want) {
				t.Errorf("pages = %v, want %v", pages, tt.want)
			}
			if st := decisionGroups(got); !reflect.DeepEqual(st, tt.status) {
				t.Errorf("decision groups = %+v, want %+v", st, tt.status)
			}
			if l := got[0].labels(p); l[clusterv1beta1.PlacementLabel] != "p" || l[clusterv1beta1.DecisionGroupIndexLabel] != fmt.Sprint(tt.want[0].index) {
				t.Errorf("labels = %v", l)
			}
		})
	}
}

func TestDecisionAggregate(t *testing.T) {
	dec := func(ns, name, placement string, clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: map[string]string{clusterv1beta1.PlacementLabel: placement},
		}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	a := newDecisionAggregate()
	a.set(dec("ns", "p-decision-1", "p", "c1", "c2"))
	a.set(dec("ns", "p-decision-2", "p", "c3"))
	a.set(dec("ns", "q-decision-1", "q", "c1"))
	a.set(dec("other", "p-decision-1", "p", "c1", "c3"))
	tests := []struct {
		name      string
		change    func()
		placement types.NamespacedName
		want      map[string]int
	}{
		{"others of ns/p", func() {}, types.NamespacedName{Namespace: "ns", Name: "p"}, map[string]int{"c1": 2, "c3": 1}},
		{"others of ns/q", func() {}, types.NamespacedName{Namespace: "ns", Name: "q"}, map[string]int{"c1": 2, "c2": 1, "c3": 2}},
		{"update replaces", func() { a.set(dec("ns", "q-decision-1", "q", "c2")) },
			types.NamespacedName{Namespace: "ns", Name: "p"}, map[string]int{"c1": 1, "c2": 1, "c3": 1}},
		{"remove forgets", func() { a.remove(types.NamespacedName{Namespace: "other", Name: "p-decision-1"}) },
			types.NamespacedName{Namespace: "ns", Name: "p"}, map[string]int{"c2": 1}},
		{"unknown placement sees all", func() {}, types.NamespacedName{Namespace: "x", Name: "y"}, map[string]int{"c1": 1, "c2": 2, "c3": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			if got := a.others(tt.placement); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("others(%s) = %v, want %v", tt.placement, got, tt.want)
			}
		})
	}
}

func TestOwnWrites(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p-decision-1"}
	decision := func(clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "p"}}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Score: 100})
		}
		return d
	}
	w := newOwnWrites()
	// Expected before the writes are sent: their events may come first.
	w.expect(key, fingerprint(decision()))
	w.expect(key, fingerprint(decision("c1")))
	relabeled := decision("c1")
	relabeled.Labels["other"] = "x"
	rescored := decision("c1")
	rescored.Status.Decisions[0].Score = 200
	tests := []struct {
		name string
		op   func() bool
		want bool
	}{
		{"own create", func() bool { return w.consume(decision()) }, true},
		{"echo consumed once", func() bool { return w.consume(decision()) }, false},
		{"foreign write", func() bool { return w.consume(decision("c2")) }, false},
		{"foreign score", func() bool { return w.consume(rescored) }, false},
		{"own status write, a label the scheduler does not write beside it", func() bool { return w.consume(relabeled) }, true},
		{"foreign delete", func() bool { return w.consumeDelete(key) }, false},
		{"own delete", func() bool { w.expect(key, deletedMark); return w.consumeDelete(key) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.op(); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClusterChangedPredicate(t *testing.T) {
	base := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"a": "1"}}}
	tests := []struct {
		name   string
		modify func(*clusterv1.ManagedCluster)
		want   bool
	}{
		{"nothing", func(*clusterv1.ManagedCluster) {}, false},
		{"resourceVersion and managedFields", func(c *clusterv1.ManagedCluster) {
			c.ResourceVersion = "2"
			c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
		}, false},
		{"heartbeat condition (a CEL selector may read it)", func(c *clusterv1.ManagedCluster) {
			c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}}
		}, true},
		{"version", func(c *clusterv1.ManagedCluster) { c.Status.Version.Kubernetes = "v1.30" }, true},
		{"annotation", func(c *clusterv1.ManagedCluster) { c.Annotations = map[string]string{"k": "v"} }, true},
		{"label", func(c *clusterv1.ManagedCluster) { c.Labels["a"] = "2" }, true},
		{"claim", func(c *clusterv1.ManagedCluster) {
			c.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "platform.open-cluster-management.io", Value: "AWS"}}
		}, true},
		{"taint", func(c *clusterv1.ManagedCluster) {
			c.Spec.Taints = []clusterv1.Taint{{Key: "k", Effect: clusterv1.TaintEffectNoSelect}}
		}, true},
		{"allocatable", func(c *clusterv1.ManagedCluster) {
			c.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("4")}
		}, true},
		{"deleting", func(c *clusterv1.ManagedCluster) { now := metav1.Now(); c.DeletionTimestamp = &now }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.modify(n)
			if got := clusterChanged().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}); got != tt.want {
				t.Errorf("clusterChanged passes the update = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClusterChangeAffects(t *testing.T) {
	withPredicate := func(sel clusterv1beta1.ClusterSelector) *clusterv1beta1.Placement {
		return &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: sel}}}}
	}
	byLabel := withPredicate(clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}})
	byClaim := withPredicate(clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}},
	}})
	byCEL := withPredicate(clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{"true"}}})
	plain := &clusterv1beta1.Placement{}
	cpu := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
		Configurations: []clusterv1beta1.PrioritizerConfig{{Weight: 1, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
			Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: clusterv1beta1.PrioritizerResourceAllocatableCPU}}},
	}}}
	spreadZone := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{SpreadPolicy: clusterv1beta1.SpreadPolicy{
		SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{{TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel}},
	}}}
	tests := []struct {
		name   string
		change clusterChange
		p      *clusterv1beta1.Placement
		want   bool
	}{
		{"taint affects a plain placement", clusterChange{all: true}, plain, true},
		{"label does not affect a plain placement", clusterChange{labels: true}, plain, false},
		{"label affects a label selector", clusterChange{labels: true}, byLabel, true},
		{"label does not affect a claim selector", clusterChange{labels: true}, byClaim, false},
		{"claim affects a claim selector", clusterChange{claims: true}, byClaim, true},
		{"claim affects CEL", clusterChange{claims: true, anything: true}, byCEL, true},
		{"allocatable affects ResourceAllocatableCPU", clusterChange{allocatable: true}, cpu, true},
		{"allocatable does not affect a label selector", clusterChange{allocatable: true}, byLabel, false},
		{"label affects a label topology", clusterChange{labels: true}, spreadZone, true},
		{"claim does not affect a label topology", clusterChange{claims: true}, spreadZone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.change.affects(tt.p); got != tt.want {
				t.Errorf("affects = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClusterChangeCEL(t *testing.T) {
	byCEL := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{"true"}}},
	}}}}
	byLabel := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}},
	}}}}
	base := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1", Labels: map[string]string{"a": "1"}}}
	tests := []struct {
		name             string
		change           func(*clusterv1.ManagedCluster)
		wantCEL, wantLbl bool
	}{
		{name: "annotation", change: func(mc *clusterv1.ManagedCluster) { mc.Annotations = map[string]string{"tier": "gold"} }, wantCEL: true},
		{name: "status.version", change: func(mc *clusterv1.ManagedCluster) { mc.Status.Version.Kubernetes = "v1.37.1" }, wantCEL: true},
		{name: "condition", change: func(mc *clusterv1.ManagedCluster) {
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}}
		}, wantCEL: true},
		{name: "label", change: func(mc *clusterv1.ManagedCluster) { mc.Labels["a"] = "2" }, wantCEL: true, wantLbl: true},
		{name: "resourceVersion and managedFields only", change: func(mc *clusterv1.ManagedCluster) {
			mc.ResourceVersion = "2"
			mc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.change(n)
			c := changeOf(base, n)
			if got := c.affects(byCEL); got != tt.wantCEL {
				t.Errorf("affects CEL selector = %v, want %v", got, tt.wantCEL)
			}
			if got := c.affects(byLabel); got != tt.wantLbl {
				t.Errorf("affects label selector = %v, want %v", got, tt.wantLbl)
			}
		})
	}
}
