package placement

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement/explain"
)

var now = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

// render prints table as kubectl does.
func render(t *testing.T, table *metav1.Table, opts printers.PrintOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := printers.NewTablePrinter(opts).PrintObj(table, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// fields returns the whitespace-separated fields of each line of s.
func fields(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

// testPlacement is a placement created an hour ago with conditions.
func testPlacement(name string, count *int32, conds ...metav1.Condition) clusterv1beta1.Placement {
	return clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:       clusterv1beta1.PlacementSpec{NumberOfClusters: count, ClusterSets: []string{"prod"}},
		Status:     clusterv1beta1.PlacementStatus{NumberOfSelectedClusters: 2, Conditions: conds},
	}
}

func TestPlacementsTable(t *testing.T) {
	satisfied := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: "AllDecisionsScheduled"}
	misconfigured := metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse, Reason: "Succeedconfigured"}
	items := []clusterv1beta1.Placement{testPlacement("web", ptr.To[int32](2), satisfied, misconfigured), testPlacement("new", nil)}
	tests := []struct {
		name string
		wide bool
		want [][]string
	}{
		{"narrow", false, [][]string{{"NAME", "SUCCEEDED", "REASON", "SELECTED", "AGE"}, {"web", "True", "AllDecisionsScheduled", "2", "60m"}, {"new", "2", "60m"}}},
		{"wide", true, [][]string{{"NAME", "SUCCEEDED", "REASON", "SELECTED", "AGE", "MISCONFIGURED", "CLUSTERSETS", "COUNT"},
			{"web", "True", "AllDecisionsScheduled", "2", "60m", "False", "prod", "2"}, {"new", "2", "60m", "prod", "all"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(render(t, PlacementsTable(items, now), printers.PrintOptions{Wide: tt.wide}))
			if strings.Join(flat(got), "|") != strings.Join(flat(tt.want), "|") {
				t.Errorf("table = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("all namespaces", func(t *testing.T) {
		out := render(t, PlacementsTable(items[:1], now), printers.PrintOptions{WithNamespace: true})
		if got := fields(out); got[0][0] != "NAMESPACE" || got[1][0] != "apps" {
			t.Errorf("table lacks the namespace column:\n%s", out)
		}
	})
}

// flat joins each row's fields with spaces.
func flat(rows [][]string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, strings.Join(r, " "))
	}
	return out
}

func TestDecisionsTable(t *testing.T) {
	pd := func(name, index, group string, clusters ...string) clusterv1beta1.PlacementDecision {
		d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			clusterv1beta1.DecisionGroupIndexLabel: index, clusterv1beta1.DecisionGroupNameLabel: group}}}
		for i, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Score: int64(10 * i)})
		}
		return d
	}
	got := flat(fields(render(t, DecisionsTable([]clusterv1beta1.PlacementDecision{
		pd("web-decision-1", "0", "canary", "c1"), pd("web-decision-2", "1", "", "c2", "", "c3"),
	}), printers.PrintOptions{})))
	want := []string{"CLUSTER GROUP INDEX GROUP NAME SCORE DECISION", "c1 0 canary 0 web-decision-1", "c2 1 0 web-decision-2", "c3 1 20 web-decision-2"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestExplain(t *testing.T) {
	res := placement.Result{
		Groups: []placement.Group{{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}}}},
		Clusters: []placement.Explanation{
			{Cluster: "c1", Selected: true, Stage: "Score", Reason: "ranked 1 of 2", Scores: map[string]int64{"BuiltIn:Balance": 100, "BuiltIn:Steady": 0}, Total: 100},
			{Cluster: "c2", Stage: "Score", Reason: "ranked 2 of 2, beyond numberOfClusters 1", Scores: map[string]int64{"BuiltIn:Balance": 50, "BuiltIn:Steady": 0}, Total: 50},
			{Cluster: "c3", Stage: "Taint", Reason: "taint gpu=true:NoSelect is not tolerated"},
		},
		Satisfied: metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: "AllDecisionsScheduled"},
	}
	p := testPlacement("web", ptr.To[int32](1))
	tests := []struct {
		name      string
		decided   []string
		wantAgree bool
		wantNote  string
	}{
		{"agrees", []string{"c1"}, true, ""},
		{"scheduler behind", []string{"c2"}, false, "the written decisions (c2) differ from what the scheduling rules select now (c1)"},
		{"no decisions", nil, false, "the written decisions (none) differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := explain.New(&p, res, tt.decided)
			if r.Agrees != tt.wantAgree {
				t.Errorf("Agrees = %v, want %v", r.Agrees, tt.wantAgree)
			}
			var out bytes.Buffer
			if err := PrintExplanation(&out, r); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if tt.wantNote != "" && !strings.Contains(text, "Note: "+tt.wantNote) {
				t.Errorf("output lacks the note %q:\n%s", tt.wantNote, text)
			}
			if tt.wantNote == "" && strings.Contains(text, "Note:") {
				t.Errorf("output has a note:\n%s", text)
			}
			rows := flat(fields(text[strings.Index(text, "CLUSTER"):]))
			want := []string{
				"CLUSTER SELECTED STAGE BUILTIN:BALANCE BUILTIN:STEADY TOTAL REASON",
				"c1 yes Score 100 0 100 ranked 1 of 2",
				"c2 no Score 50 0 50 ranked 2 of 2, beyond numberOfClusters 1",
				"c3 no Taint taint gpu=true:NoSelect is not tolerated",
			}
			if strings.Join(rows, "\n") != strings.Join(want, "\n") {
				t.Errorf("table =\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("disabled scheduling is noted", func(t *testing.T) {
		q := p.DeepCopy()
		q.Annotations = map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"}
		if r := explain.New(q, res, []string{"c1"}); len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "skips it") {
			t.Errorf("notes = %q, want the disabled scheduling named", r.Notes)
		}
	})
}
