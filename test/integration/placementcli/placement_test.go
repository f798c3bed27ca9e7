package placementcli

import (
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"

	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement/explain"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// getPlacement reads Placement apps/name.
func getPlacement(ctx context.Context, t *testing.T, c client.Client, name string) *clusterv1beta1.Placement {
	t.Helper()
	p := &clusterv1beta1.Placement{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, p); err != nil {
		t.Fatalf("get Placement apps/%s: %v", name, err)
	}
	return p
}

// testPlacement creates, lists and deletes placements in namespace apps.
func testPlacement(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	t.Run("create with every flag", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "full", "-n", "apps", "--clustersets", "prod",
			"--label-selectors", "env=prod,region in (eu,us)", "--label-selectors", "!canary",
			"--claim-selectors", "platform.open-cluster-management.io in (AWS)",
			"--cel", `managedCluster.metadata.name != "c9"`, "--cel", `managedCluster.metadata.labels["env"] == "prod"`,
			"--count", "2", "--prioritizers", "BuiltIn:ResourceAllocatableCPU:2,AddOn:demo:cpuratio:-1", "--prioritizer-mode", "Exact",
			"--spread", "region:1:DoNotSchedule", "--spread", "platform.open-cluster-management.io:2:claim",
			"--tolerate", "gpu=true:NoSelect:300", "--tolerate", "cluster.open-cluster-management.io/unreachable"),
			"Placement full created in namespace apps\n")
		full := getPlacement(ctx, t, c, "full")
		clitest.ExpectFieldManager(t, full, "kubectl-ocm-placement-create/Apply")
		got := full.Spec
		want := clusterv1beta1.PlacementSpec{
			ClusterSets:      []string{"prod"},
			NumberOfClusters: ptr.To[int32](2),
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}, MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "region", Operator: "In", Values: []string{"eu", "us"}}, {Key: "canary", Operator: "DoesNotExist"}}},
				ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "platform.open-cluster-management.io", Operator: "In", Values: []string{"AWS"}}}},
				CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.metadata.name != "c9"`, `managedCluster.metadata.labels["env"] == "prod"`}},
			}}},
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: "Exact", Configurations: []clusterv1beta1.PrioritizerConfig{
				{Weight: 2, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "BuiltIn", BuiltIn: "ResourceAllocatableCPU"}},
				{Weight: -1, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "AddOn", AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "cpuratio"}}},
			}},
			SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{
				{TopologyKey: "region", TopologyKeyType: "Label", MaxSkew: 1, WhenUnsatisfiable: "DoNotSchedule"},
				{TopologyKey: "platform.open-cluster-management.io", TopologyKeyType: "Claim", MaxSkew: 2, WhenUnsatisfiable: "ScheduleAnyway"},
			}},
			Tolerations: []clusterv1beta1.Toleration{
				{Key: "gpu", Operator: "Equal", Value: "true", Effect: "NoSelect", TolerationSeconds: ptr.To[int64](300)},
				{Key: "cluster.open-cluster-management.io/unreachable", Operator: "Exists"},
			},
		}
		// Server-side defaults (decision strategy, sortBy, ...) are not the CLI's concern.
		for name, pair := range map[string][2]any{
			"clusterSets": {got.ClusterSets, want.ClusterSets}, "numberOfClusters": {got.NumberOfClusters, want.NumberOfClusters},
			"predicates": {got.Predicates, want.Predicates}, "prioritizerPolicy": {got.PrioritizerPolicy, want.PrioritizerPolicy},
			"spreadPolicy": {got.SpreadPolicy, want.SpreadPolicy}, "tolerations": {got.Tolerations, want.Tolerations},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				g, _ := json.Marshal(pair[0])
				w, _ := json.Marshal(pair[1])
				t.Errorf("spec.%s = %s, want %s", name, g, w)
			}
		}
	})
	t.Run("bad flags change nothing", func(t *testing.T) {
		before := getPlacement(ctx, t, c, "full")
		for _, tc := range []struct {
			args []string
			want []string
		}{
			{[]string{"--prioritizers", "BuiltIn:Spread:1"}, []string{`unknown built-in prioritizer "Spread"`, "Balance, Steady"}},
			{[]string{"--tolerate", "gpu:NoExecute"}, []string{"--tolerate", `"NoExecute" is neither an effect`}},
			{[]string{"--spread", "region"}, []string{"--spread", "KEY:MAXSKEW"}},
			{[]string{"--label-selectors", "env in (a"}, []string{"--label-selectors", "kubectl -l"}},
			{[]string{"--count", "-3"}, []string{"--count -3 must not be negative"}},
			{[]string{"--cel", "managedCluster.metadata.name ==== 1"}, []string{"the hub would mark this placement misconfigured", "correct --cel"}},
		} {
			for _, name := range []string{"bad", "full"} {
				clitest.ExpectErr(t, k.Run(ctx, append([]string{"placement", "create", name, "-n", "apps", "--overwrite"}, tc.args...)...), tc.want...)
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "bad"}, &clusterv1beta1.Placement{}); !apierrors.IsNotFound(err) {
			t.Errorf("placement bad exists after refused creates: err = %v", err)
		}
		if after := getPlacement(ctx, t, c, "full"); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("placement full changed after refused overwrites")
		}
		clitest.ExpectErr(t, k.Run(ctx, "placement", "create", "full", "-n", "apps"), "placement full already exists in namespace apps", "--overwrite")
	})
	t.Run("dry runs store nothing", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "dry", "-n", "apps", "--count", "1", "--dry-run=client", "-o", "yaml"),
			"kind: Placement", "numberOfClusters: 1")
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "dry", "-n", "apps", "--count", "1", "--dry-run=server"), "created (server dry run)")
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "dry"}, &clusterv1beta1.Placement{}); !apierrors.IsNotFound(err) {
			t.Errorf("a dry run stored the placement: err = %v", err)
		}
	})
	t.Run("unbound cluster sets warn", func(t *testing.T) {
		r := k.Run(ctx, "placement", "create", "other", "-n", "apps", "--clustersets", "prod,eu")
		clitest.ExpectOK(t, r, "Placement other created")
		if !strings.Contains(r.ErrOut, "cluster set(s) eu of --clustersets are not bound to namespace apps") {
			t.Errorf("stderr lacks the unbound set warning:\n%s", r.ErrOut)
		}
		clitest.ExpectOK(t, k.Run(ctx, "placement", "delete", "other", "-n", "apps"), "Placement other deleted in namespace apps")
	})
	t.Run("get", func(t *testing.T) {
		p := getPlacement(ctx, t, c, "full")
		p.Status.NumberOfSelectedClusters = 2
		p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{}
		p.Status.Conditions = []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue,
			Reason: clusterv1beta1.ReasonAllDecisionsScheduled, LastTransitionTime: metav1.Now()}}
		if err := c.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		r := k.Run(ctx, "placement", "get", "-n", "apps")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "full", "True", "AllDecisionsScheduled", "2") {
			t.Errorf("table lacks full True AllDecisionsScheduled 2:\n%s", r.Out)
		}
		r = k.Run(ctx, "placement", "get", "-A", "-o", "wide")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "apps", "full", "True", "AllDecisionsScheduled", "2") || !strings.Contains(r.Out, "CLUSTERSETS") {
			t.Errorf("-A -o wide lacks the namespace or the wide columns:\n%s", r.Out)
		}
		clitest.ExpectOK(t, k.Run(ctx, "placement", "get", "full", "-n", "apps", "-o", "json"), `"kind": "Placement"`, `"numberOfClusters": 2`)
		clitest.ExpectErr(t, k.Run(ctx, "placement", "get", "ghost", "-n", "apps"), "placement ghost not found in namespace apps")
	})
	t.Run("decisions", func(t *testing.T) {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "full-decision-1", Labels: map[string]string{
			clusterv1beta1.PlacementLabel: "full", clusterv1beta1.DecisionGroupIndexLabel: "0", clusterv1beta1.DecisionGroupNameLabel: "canary"}}}
		kit.MustCreate(ctx, t, c, pd)
		pd.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "c1", Score: 40}, {ClusterName: "c2", Score: 30}}
		if err := c.Status().Update(ctx, pd); err != nil {
			t.Fatal(err)
		}
		r := k.Run(ctx, "placement", "decisions", "full", "-n", "apps")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "c1", "0", "canary", "40", "full-decision-1") || !clitest.HasRow(r.Out, "c2", "0", "canary", "30", "full-decision-1") {
			t.Errorf("decisions table lacks c1 and c2:\n%s", r.Out)
		}
		clitest.ExpectOK(t, k.Run(ctx, "placement", "decisions", "full", "-n", "apps", "-o", "yaml"), "kind: PlacementDecisionList", "clusterName: c1")
	})
	t.Run("completion", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "__complete", "placement", "explain", "-n", "apps", "f"), "full\n")
		clitest.ExpectOK(t, k.Run(ctx, "__complete", "work", "create", "w", "--placement", "apps/"), "apps/full\n")
	})
	t.Run("delete", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "gone", "-n", "apps"))
		clitest.ExpectOK(t, k.Run(ctx, "placement", "delete", "gone", "-n", "apps"), "Placement gone deleted")
		clitest.ExpectErr(t, k.Run(ctx, "placement", "delete", "gone", "-n", "apps"), "placement gone not found in namespace apps")
		clitest.ExpectOK(t, k.Run(ctx, "placement", "delete", "gone", "-n", "apps", "--ignore-not-found"))
	})
}

// testExplain explains placements over set prod (c1, c2, c3 tainted), with
// c4 and c5 outside it; no scheduler runs, so the decisions lag.
func testExplain(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "prod", "--clusters", "c4"))
	clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "eu", "-n", "apps", "--label-selectors", "env=prod"))
	t.Run("table", func(t *testing.T) {
		r := k.Run(ctx, "placement", "explain", "eu", "-n", "apps")
		clitest.ExpectOK(t, r, "Note: the written decisions (none) differ from what the scheduling rules select now (c1,c2)", "kubectl ocm hub status")
		for cluster, want := range map[string][]string{
			"c1": {"c1", "yes", "Selected"}, "c2": {"c2", "yes", "Selected"}, "c3": {"c3", "no", "Taint"},
			"c4": {"c4", "no", "Predicate"}, "c5": {"c5", "no", "ClusterSet"},
		} {
			if got := clitest.Row(r.Out, cluster); len(got) < 3 || strings.Join(got[:3], " ") != strings.Join(want, " ") {
				t.Errorf("row of %s = %v, want it to start with %v\n%s", cluster, got, want, r.Out)
			}
		}
		if got := strings.Join(clitest.Row(r.Out, "c3"), " "); !strings.Contains(got, "gpu") {
			t.Errorf("the reason of c3 does not name taint gpu: %q", got)
		}
		if got := strings.Join(clitest.Row(r.Out, "c4"), " "); !strings.Contains(got, "env") {
			t.Errorf("the reason of c4 does not name label env: %q", got)
		}
	})
	t.Run("toleration and json", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "gpu", "-n", "apps", "--tolerate", "gpu=true:NoSelect", "--label-selectors", "env=prod"))
		r := k.Run(ctx, "placement", "explain", "gpu", "-n", "apps", "-o", "json")
		clitest.ExpectOK(t, r)
		var report explain.Explanation
		if err := json.Unmarshal([]byte(r.Out), &report); err != nil {
			t.Fatalf("decode %q: %v", r.Out, err)
		}
		if !reflect.DeepEqual(report.Selected, []string{"c1", "c2", "c3"}) || report.Agrees {
			t.Errorf("selected = %v (agrees %v), want c1,c2,c3 not agreeing with no decisions", report.Selected, report.Agrees)
		}
	})
	t.Run("add-on scores rank the clusters", func(t *testing.T) {
		for cluster, value := range map[string]int32{"c1": 10, "c2": 90} {
			kit.MustCreate(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
			score := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "demo"}}
			kit.MustCreate(ctx, t, c, score)
			score.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpu", Value: value}}
			if err := c.Status().Update(ctx, score); err != nil {
				t.Fatal(err)
			}
		}
		clitest.ExpectOK(t, k.Run(ctx, "placement", "create", "scored", "-n", "apps", "--label-selectors", "env=prod", "--count", "1",
			"--prioritizers", "AddOn:demo:cpu:2", "--prioritizer-mode", "Exact"))
		r := k.Run(ctx, "placement", "explain", "scored", "-n", "apps")
		clitest.ExpectOK(t, r, "ADDON:DEMO:CPU")
		for cluster, want := range map[string][]string{"c1": {"c1", "no", "Rank", "10", "20"}, "c2": {"c2", "yes", "Selected", "90", "180"}} {
			if got := clitest.Row(r.Out, cluster); len(got) < 5 || strings.Join(got[:5], " ") != strings.Join(want, " ") {
				t.Errorf("row of %s = %v, want it to start with %v\n%s", cluster, got, want, r.Out)
			}
		}
	})
	t.Run("agrees with written decisions", func(t *testing.T) {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "eu-decision-1", Labels: map[string]string{
			clusterv1beta1.PlacementLabel: "eu", clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
		kit.MustCreate(ctx, t, c, pd)
		pd.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}, {ClusterName: "c2"}}
		if err := c.Status().Update(ctx, pd); err != nil {
			t.Fatal(err)
		}
		r := k.Run(ctx, "placement", "explain", "eu", "-n", "apps")
		clitest.ExpectOK(t, r, "2 cluster(s) selected by the scheduling rules, 2 in the written decisions")
		if strings.Contains(r.Out, "Note:") {
			t.Errorf("explain notes a disagreement although the decisions match:\n%s", r.Out)
		}
	})
}
