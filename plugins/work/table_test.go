package work

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
)

var now = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

// cond returns a condition of type typ with status and message.
func cond(typ string, status metav1.ConditionStatus, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R", Message: message, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Minute))}
}

// raw returns a manifest of the given JSON.
func raw(s string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

// manifestStatus returns the reported state of manifest ordinal.
func manifestStatus(ordinal int32, kind, group, ns, name string, conds ...metav1.Condition) workv1.ManifestCondition {
	return workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Kind: kind, Group: group, Version: "v1", Namespace: ns, Name: name},
		Conditions:   conds,
	}
}

// testWork is a work of two manifests, the first reported with feedback and drift.
func testWork() workv1.ManifestWork {
	ms := manifestStatus(0, "Deployment", "apps", "default", "web",
		cond(workv1.ManifestApplied, metav1.ConditionTrue, ""), cond(workv1.ManifestAvailable, metav1.ConditionFalse, "not found"),
		cond(workv1.ManifestDrifted, metav1.ConditionTrue, "spec.replicas changed"), cond(workv1.ManifestProgressing, metav1.ConditionTrue, ""))
	ms.StatusFeedbacks.Values = []workv1.FeedbackValue{
		{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](2)}},
		{Name: "Phase", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("Running")}},
	}
	return workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "cluster1", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			raw(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`),
			raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"}}`),
		}}},
		Status: workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{
				cond(workv1.WorkApplied, metav1.ConditionTrue, ""), cond(workv1.WorkAvailable, metav1.ConditionFalse, ""),
				cond(workv1.WorkProgressing, metav1.ConditionTrue, ""),
			},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{ms}},
		},
	}
}

// render prints table and returns its text.
func render(t *testing.T, table *metav1.Table, wide bool) string {
	t.Helper()
	var out bytes.Buffer
	if err := printers.NewTablePrinter(printers.PrintOptions{Wide: wide}).PrintObj(table, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestWorksTable(t *testing.T) {
	pending := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "cluster2", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{raw(`{}`)}}}}
	tests := []struct {
		name     string
		wide     bool
		want     []string
		wantNone string
	}{
		{"default columns", false, []string{
			"NAME   CLUSTER    MANIFESTS   APPLIED   AVAILABLE   DRIFTED   AGE\n",
			"web    cluster1   2           True      False       1         120m\n",
			"new    cluster2   1                                           60s\n",
		}, "PROGRESSING"},
		{"wide", true, []string{"PROGRESSING   DEGRADED   COMPLETE   DELETING", "120m   True"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, WorksTable([]workv1.ManifestWork{testWork(), pending}, now), tt.wide)
			for _, line := range tt.want {
				if !strings.Contains(out, line) {
					t.Errorf("table lacks %q:\n%s", line, out)
				}
			}
			if tt.wantNone != "" && strings.Contains(out, tt.wantNone) {
				t.Errorf("table has %q without -o wide:\n%s", tt.wantNone, out)
			}
		})
	}
}

func TestDrifted(t *testing.T) {
	w := testWork()
	if got := drifted(&w); got != "1" {
		t.Errorf("drifted = %q, want 1 (one manifest drifted)", got)
	}
	w = testWork()
	w.Status.ResourceStatus.Manifests[0].Conditions = nil
	if got := drifted(&w); got != "" {
		t.Errorf("drifted = %q, want empty without drift conditions", got)
	}
}

func TestStatusTable(t *testing.T) {
	w := testWork()
	out := render(t, StatusTable(workreport.New(&w), now), false)
	for _, want := range []string{
		"KIND              NAMESPACE/NAME   APPLIED   AVAILABLE   FEEDBACK                         LAST DRIFT   MESSAGE",
		"Deployment.apps   default/web      True      False       Phase=Running, ReadyReplicas=2   5m ago (R)",
		"Available: not found; Drifted: spec.replicas changed",
		"Progressing=True",
		"ConfigMap         default/cm", "not reported by the work agent yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Without other conditions there is no CONDITIONS column.
	w.Status.ResourceStatus.Manifests[0].Conditions = w.Status.ResourceStatus.Manifests[0].Conditions[:3]
	if out := render(t, StatusTable(workreport.New(&w), now), false); strings.Contains(out, "CONDITIONS") {
		t.Errorf("table has a CONDITIONS column without other conditions:\n%s", out)
	}
}
