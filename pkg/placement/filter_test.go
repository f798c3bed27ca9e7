package placement

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

func TestPredicates(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{
		newCluster("aws-prod").label("env", "prod").claim("platform.open-cluster-management.io", "AWS").build(),
		newCluster("gcp-dev").label("env", "dev").claim("platform.open-cluster-management.io", "GCP").build(),
		newCluster("bare").build(),
	}
	both := clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
		ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpIn, Values: []string{"AWS"}}}}}}
	tests := []struct {
		name    string
		preds   []clusterv1beta1.ClusterPredicate
		want    []string
		reasons map[string]string
	}{
		{name: "no predicates selects all", want: []string{"aws-prod", "bare", "gcp-dev"}},
		{name: "empty predicate selects all", preds: []clusterv1beta1.ClusterPredicate{{}},
			want: []string{"aws-prod", "bare", "gcp-dev"}},
		{name: "label", preds: []clusterv1beta1.ClusterPredicate{labelPredicate(map[string]string{"env": "prod"})},
			want: []string{"aws-prod"}, reasons: map[string]string{
				"gcp-dev": "predicate 0: label env=prod does not match (cluster has env=dev)",
				"bare":    "predicate 0: label env=prod does not match (cluster has no label env)"}},
		{name: "label expression NotIn", preds: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}}}}},
			want: []string{"bare", "gcp-dev"}},
		{name: "claim In", preds: []clusterv1beta1.ClusterPredicate{claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpIn, "GCP")},
			want: []string{"gcp-dev"}, reasons: map[string]string{
				"aws-prod": "predicate 0: claim platform.open-cluster-management.io in (GCP) does not match (cluster has platform.open-cluster-management.io=AWS)"}},
		{name: "claim Exists", preds: []clusterv1beta1.ClusterPredicate{claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpExists)},
			want: []string{"aws-prod", "gcp-dev"}},
		{name: "claim DoesNotExist", preds: []clusterv1beta1.ClusterPredicate{claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpDoesNotExist)},
			want: []string{"bare"}},
		{name: "label and claim are ANDed", preds: []clusterv1beta1.ClusterPredicate{both}, want: nil,
			reasons: map[string]string{"gcp-dev": "predicate 0: claim platform.open-cluster-management.io in (AWS)"}},
		{name: "predicates are ORed", preds: []clusterv1beta1.ClusterPredicate{
			labelPredicate(map[string]string{"env": "prod"}), claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpIn, "GCP")},
			want: []string{"aws-prod", "gcp-dev"}, reasons: map[string]string{
				"bare": "predicate 0: label env=prod does not match (cluster has no label env); predicate 1: claim"}},
		{name: "CEL on labels", preds: []clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.metadata.labels["env"] == "dev"`)},
			want: []string{"gcp-dev"}, reasons: map[string]string{"aws-prod": `CEL expression 0 "managedCluster.metadata.labels[\"env\"] == \"dev\"" evaluated to false`}},
		{name: "CEL on claims with ext strings", preds: []clusterv1beta1.ClusterPredicate{celPredicate(
			`managedCluster.status.clusterClaims.exists(c, c.name == "platform.open-cluster-management.io" && c.value.lowerAscii() == "aws")`)},
			want: []string{"aws-prod"}},
		{name: "CEL expressions are ANDed", preds: []clusterv1beta1.ClusterPredicate{celPredicate(
			`managedCluster.metadata.name.startsWith("aws")`, `managedCluster.metadata.labels["env"] == "dev"`)},
			want: nil},
		{name: "CEL error does not select", preds: []clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.metadata.labels["env"] == "prod"`)},
			want: []string{"aws-prod"}, reasons: map[string]string{"bare": "failed"}},
		{name: "CEL with label selector ANDed", preds: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			CelSelector:   clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.metadata.name == "aws-prod"`}}}}},
			want: []string{"aws-prod"}},
	}
	s := NewScheduler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.Schedule(defaultInput(clusterv1beta1.PlacementSpec{Predicates: tt.preds}, clusters...))
			if got := sortedSelected(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selected = %v, want %v (%+v)", got, tt.want, res.Clusters)
			}
			for name, want := range tt.reasons {
				e := explanation(t, res, name)
				if e.Stage != StagePredicate || !strings.Contains(e.Reason, want) {
					t.Errorf("%s: %s %q, want stage Predicate with %q", name, e.Stage, e.Reason, want)
				}
			}
		})
	}
}

func TestMisconfigured(t *testing.T) {
	tests := []struct {
		name string
		spec clusterv1beta1.PlacementSpec
		want []string
	}{
		{name: "bad label operator", spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{}, {RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}}}}}},
			want: []string{"Predicate:", "predicate 1", "labelSelector", "Bogus"}},
		{name: "bad claim operator", spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			claimPredicate("x", "Bogus")}},
			want: []string{"predicate 0", "claimSelector"}},
		{name: "CEL syntax error", spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			celPredicate(`managedCluster.metadata.name ==`)}},
			want: []string{"predicate 0: celSelector expression 0: compilation failed", "Syntax error"}},
		{name: "CEL undeclared", spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			celPredicate(`true`, `cluster.name == "a"`)}},
			want: []string{"expression 1", "undeclared reference"}},
		{name: "CEL not a bool", spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			celPredicate(`managedCluster.metadata.name.size()`)}},
			want: []string{"must return a bool"}},
		{name: "empty toleration key needs Exists", spec: clusterv1beta1.PlacementSpec{Tolerations: []clusterv1beta1.Toleration{{Value: "x"}}},
			want: []string{"TaintToleration:", "operator must be Exists"}},
		{name: "Exists with value", spec: clusterv1beta1.PlacementSpec{Tolerations: []clusterv1beta1.Toleration{
			{Key: "k", Operator: clusterv1beta1.TolerationOpExists, Value: "v"}}},
			want: []string{"value should be empty"}},
		{name: "unknown builtin prioritizer", spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
			Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{BuiltIn: "Spread"}, Weight: 1}}}},
			want: []string{"incorrect builtin prioritizer: Spread"}},
		{name: "addOn without names", spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
			Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "AddOn"}, Weight: 1}}}},
			want: []string{"addOn should name"}},
		{name: "bad decision group selector", spec: clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{
			GroupStrategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "g",
				ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Nope"}}}}}}}}},
			want: []string{"DecisionStrategy:", "decision group 0 (g)"}},
	}
	s := NewScheduler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.Schedule(defaultInput(tt.spec, newCluster("a").build()))
			c := res.Misconfigured
			if c.Type != clusterv1beta1.PlacementConditionMisconfigured || c.Status != metav1.ConditionTrue || c.Reason != clusterv1beta1.ReasonMisconfigured {
				t.Fatalf("misconfigured = %+v", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(c.Message, w) {
					t.Errorf("message %q does not contain %q", c.Message, w)
				}
			}
			if res.Selected != 0 || len(selectedNames(res)) != 0 || len(res.Groups) != 1 {
				t.Errorf("selected %d, groups %+v; want none and one empty group", res.Selected, res.Groups)
			}
			if e := explanation(t, res, "a"); e.Stage != StageMisconfigured {
				t.Errorf("stage = %s", e.Stage)
			}
			if res.Satisfied.Reason != clusterv1beta1.ReasonNoManagedClusterMatched {
				t.Errorf("satisfied reason = %s", res.Satisfied.Reason)
			}
		})
	}
}

func TestTaints(t *testing.T) {
	const unreachable = clusterv1.ManagedClusterTaintUnreachable
	added := now.Add(-time.Minute)
	tests := []struct {
		name        string
		taintKey    string
		taintValue  string
		effect      clusterv1.TaintEffect
		tolerations []clusterv1beta1.Toleration
		decided     bool
		selected    bool
		requeue     time.Duration
		reason      string
	}{
		{name: "NoSelect not tolerated", taintKey: unreachable, effect: clusterv1.TaintEffectNoSelect,
			reason: "taint cluster.open-cluster-management.io/unreachable:NoSelect is not tolerated"},
		{name: "unavailable not tolerated by default", taintKey: clusterv1.ManagedClusterTaintUnavailable, effect: clusterv1.TaintEffectNoSelect,
			reason: "unavailable:NoSelect is not tolerated"},
		{name: "NoSelect on decided cluster still excludes", taintKey: "k", effect: clusterv1.TaintEffectNoSelect, decided: true},
		{name: "PreferNoSelect ignored", taintKey: "k", effect: clusterv1.TaintEffectPreferNoSelect, selected: true},
		{name: "NoSelectIfNew excludes new", taintKey: "k", effect: clusterv1.TaintEffectNoSelectIfNew,
			reason: "taint k:NoSelectIfNew is not tolerated"},
		{name: "NoSelectIfNew keeps decided", taintKey: "k", effect: clusterv1.TaintEffectNoSelectIfNew, decided: true, selected: true},
		{name: "NoSelectIfNew tolerated", taintKey: "k", effect: clusterv1.TaintEffectNoSelectIfNew, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Operator: clusterv1beta1.TolerationOpExists}}},
		{name: "Equal matches value", taintKey: "k", taintValue: "v", effect: clusterv1.TaintEffectNoSelect, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Value: "v"}}},
		{name: "Equal rejects other value", taintKey: "k", taintValue: "v", effect: clusterv1.TaintEffectNoSelect,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Operator: clusterv1beta1.TolerationOpEqual, Value: "w"}},
			reason:      "taint k=v:NoSelect is not tolerated"},
		{name: "Exists matches any value", taintKey: "k", taintValue: "v", effect: clusterv1.TaintEffectNoSelect, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Operator: clusterv1beta1.TolerationOpExists}}},
		{name: "other key does not match", taintKey: "k", effect: clusterv1.TaintEffectNoSelect,
			tolerations: []clusterv1beta1.Toleration{{Key: "j", Operator: clusterv1beta1.TolerationOpExists}}},
		{name: "empty key Exists tolerates all", taintKey: unreachable, effect: clusterv1.TaintEffectNoSelect, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Operator: clusterv1beta1.TolerationOpExists}}},
		{name: "effect must match", taintKey: "k", effect: clusterv1.TaintEffectNoSelect,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectNoSelectIfNew}}},
		{name: "effect matches", taintKey: "k", effect: clusterv1.TaintEffectNoSelect, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Key: "k", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectNoSelect}}},
		{name: "tolerationSeconds not expired requeues", taintKey: unreachable, effect: clusterv1.TaintEffectNoSelect, selected: true,
			tolerations: []clusterv1beta1.Toleration{{Key: unreachable, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](300)}},
			requeue:     4 * time.Minute},
		{name: "tolerationSeconds expired", taintKey: unreachable, effect: clusterv1.TaintEffectNoSelect,
			tolerations: []clusterv1beta1.Toleration{{Key: unreachable, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](30)}},
			reason:      "its toleration expired at 2026-01-01T11:59:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := defaultInput(clusterv1beta1.PlacementSpec{Tolerations: tt.tolerations},
				newCluster("a").taint(tt.taintKey, tt.taintValue, tt.effect, added).build(), newCluster("b").build())
			if tt.decided {
				in.Decided = []string{"a"}
			}
			res := NewScheduler().Schedule(in)
			e := explanation(t, res, "a")
			if e.Selected != tt.selected {
				t.Fatalf("selected = %v (%s: %s), want %v", e.Selected, e.Stage, e.Reason, tt.selected)
			}
			if !tt.selected && (e.Stage != StageTaint || !strings.Contains(e.Reason, tt.reason)) {
				t.Errorf("explanation %s %q, want Taint with %q", e.Stage, e.Reason, tt.reason)
			}
			if res.RequeueAfter != tt.requeue {
				t.Errorf("requeueAfter = %v, want %v", res.RequeueAfter, tt.requeue)
			}
			if !explanation(t, res, "b").Selected {
				t.Errorf("untainted cluster b not selected")
			}
		})
	}
}

func TestRequeueIsEarliestExpiry(t *testing.T) {
	tol := []clusterv1beta1.Toleration{{Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](600)}}
	in := defaultInput(clusterv1beta1.PlacementSpec{Tolerations: tol},
		newCluster("a").taint("k", "", clusterv1.TaintEffectNoSelect, now.Add(-time.Minute)).build(),
		newCluster("b").taint("k", "", clusterv1.TaintEffectNoSelect, now.Add(-5*time.Minute)).
			taint("j", "", clusterv1.TaintEffectPreferNoSelect, now).build())
	res := NewScheduler().Schedule(in)
	if res.RequeueAfter != 5*time.Minute || res.Selected != 2 {
		t.Errorf("requeueAfter = %v, selected %d; want 5m and 2", res.RequeueAfter, res.Selected)
	}
}
