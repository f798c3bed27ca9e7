package placement

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

func TestCandidates(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{
		newCluster("a").set("prod").label("env", "prod").build(),
		newCluster("b").set("dev").label("env", "dev").build(),
		newCluster("c").set("prod").label("gone", "yes").deleting().build(),
		newCluster("d").label("env", "prod").build(),
	}
	legacy := exclusiveSet("dev")
	legacy.Spec.ClusterSelector.SelectorType = clusterv1beta2.LegacyClusterSetLabel
	global := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "global"},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}}
	otherNS := binding("dev")
	otherNS.Namespace = "elsewhere"
	tests := []struct {
		name         string
		sets         []*clusterv1beta2.ManagedClusterSet
		bindings     []*clusterv1beta2.ManagedClusterSetBinding
		specSets     []string
		want         []string
		reason       string
		stages       map[string]Stage
		reasonSubstr map[string]string
	}{
		{name: "no bindings", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("prod")},
			reason: clusterv1beta1.ReasonNoManagedClusterSetBindings,
			stages: map[string]Stage{"a": StageClusterSet}},
		{name: "binding without its set is ignored", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod")},
			reason: clusterv1beta1.ReasonNoManagedClusterSetBindings},
		{name: "binding in another namespace is ignored", sets: []*clusterv1beta2.ManagedClusterSet{legacy},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{otherNS},
			reason:   clusterv1beta1.ReasonNoManagedClusterSetBindings},
		{name: "exclusive set, deleting member excluded", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("prod")},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod")},
			want:     []string{"a"}, reason: clusterv1beta1.ReasonAllDecisionsScheduled,
			stages:       map[string]Stage{"a": StageSelected, "b": StageClusterSet, "c": StageDeleting, "d": StageClusterSet},
			reasonSubstr: map[string]string{"c": "being deleted", "b": "no ManagedClusterSet"}},
		{name: "legacy selector type is exclusive", sets: []*clusterv1beta2.ManagedClusterSet{legacy},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("dev")},
			want:     []string{"b"}, reason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "label selector set", sets: []*clusterv1beta2.ManagedClusterSet{labelSet("prod-env", map[string]string{"env": "prod"})},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod-env")},
			want:     []string{"a", "d"}, reason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "global set selects all", sets: []*clusterv1beta2.ManagedClusterSet{global},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("global")},
			want:     []string{"a", "b", "d"}, reason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "spec.clusterSets narrows", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("prod"), legacy},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod"), binding("dev")},
			specSets: []string{"dev"}, want: []string{"b"}, reason: clusterv1beta1.ReasonAllDecisionsScheduled,
			reasonSubstr: map[string]string{"a": "ManagedClusterSet prod, which spec.clusterSets does not name"}},
		{name: "no intersection", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("prod")},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod")},
			specSets: []string{"other"}, reason: clusterv1beta1.ReasonNoIntersection},
		{name: "all sets empty", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("empty")},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("empty")},
			reason:   clusterv1beta1.ReasonAllManagedClusterSetsEmpty},
		{name: "only deleting members is empty", sets: []*clusterv1beta2.ManagedClusterSet{labelSet("c", map[string]string{"gone": "yes"})},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("c")},
			reason:   clusterv1beta1.ReasonAllManagedClusterSetsEmpty},
		{name: "no cluster matched", sets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("prod")},
			bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("prod")},
			specSets: nil, want: nil, reason: clusterv1beta1.ReasonNoManagedClusterMatched},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := clusterv1beta1.PlacementSpec{ClusterSets: tt.specSets}
			if tt.name == "no cluster matched" {
				spec.Predicates = []clusterv1beta1.ClusterPredicate{labelPredicate(map[string]string{"env": "none"})}
			}
			in := Input{Placement: placement(spec), Clusters: clusters, ClusterSets: tt.sets, Bindings: tt.bindings, Now: now}
			res := NewScheduler().Schedule(in)
			if got := sortedSelected(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selected = %v, want %v", got, tt.want)
			}
			if res.Satisfied.Reason != tt.reason {
				t.Errorf("reason = %s (%s), want %s", res.Satisfied.Reason, res.Satisfied.Message, tt.reason)
			}
			if len(res.Clusters) != len(clusters) {
				t.Errorf("%d explanations, want %d", len(res.Clusters), len(clusters))
			}
			for name, stage := range tt.stages {
				if e := explanation(t, res, name); e.Stage != stage {
					t.Errorf("%s: stage %s (%s), want %s", name, e.Stage, e.Reason, stage)
				}
			}
			for name, sub := range tt.reasonSubstr {
				if e := explanation(t, res, name); !strings.Contains(e.Reason, sub) {
					t.Errorf("%s: reason %q does not contain %q", name, e.Reason, sub)
				}
			}
		})
	}
}

func TestSatisfiedMessages(t *testing.T) {
	tests := []struct {
		name, reason, message string
		status                metav1.ConditionStatus
		n                     *int32
	}{
		{name: "all", n: ptr.To[int32](2), status: metav1.ConditionTrue,
			reason: clusterv1beta1.ReasonAllDecisionsScheduled, message: "All cluster decisions scheduled"},
		{name: "unscheduled", n: ptr.To[int32](5), status: metav1.ConditionFalse,
			reason: clusterv1beta1.ReasonNotAllDecisionsScheduled, message: "3 cluster decisions unscheduled"},
		{name: "unset selects all", status: metav1.ConditionTrue,
			reason: clusterv1beta1.ReasonAllDecisionsScheduled, message: "All cluster decisions scheduled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := NewScheduler().Schedule(defaultInput(clusterv1beta1.PlacementSpec{NumberOfClusters: tt.n},
				newCluster("a").build(), newCluster("b").build()))
			c := res.Satisfied
			if c.Type != clusterv1beta1.PlacementConditionSatisfied || c.Status != tt.status ||
				c.Reason != tt.reason || c.Message != tt.message {
				t.Errorf("condition = %+v, want %s %s %q", c, tt.status, tt.reason, tt.message)
			}
			if res.Misconfigured.Status != metav1.ConditionFalse || res.Misconfigured.Reason != clusterv1beta1.ReasonSucceedconfigured {
				t.Errorf("misconfigured = %+v", res.Misconfigured)
			}
		})
	}
}
