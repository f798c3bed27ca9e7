package work

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
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

// largeWork is a work of generation 2 whose manifests go as a payload of
// 9 ConfigMaps of 64 KiB, with conds.
func largeWork(t *testing.T, conds ...metav1.Condition) workv1.ManifestWork {
	t.Helper()
	o := &CreateOptions{Name: "big"}
	w := o.buildWork("cluster1", configMaps(t, 9, 64<<10), nil)
	require.NoError(t, o.packPayload(&w.Spec))
	w.Generation, w.CreationTimestamp, w.Status.Conditions = 2, metav1.NewTime(now.Add(-time.Hour)), conds
	return *w
}

// staged is a PayloadStaged condition of generation 2.
func staged(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: payloadv1alpha1.WorkPayloadStaged, Status: status, Reason: reason, Message: message, ObservedGeneration: 2}
}

func TestWorksTableLargePayload(t *testing.T) {
	progress := payload.Progress{Chunks: 9, Bytes: 9 << 16, PresentChunks: 4, PresentBytes: 4 << 16}
	missing := staged(metav1.ConditionFalse, payloadv1alpha1.ReasonChunksMissing, "generation 2: "+progress.String()+"; waiting for [sha256-ab]")
	out := render(t, WorksTable([]workv1.ManifestWork{testWork(), largeWork(t, missing)}, now), false)
	for _, want := range []string{
		"NAME   CLUSTER    MANIFESTS   APPLIED   AVAILABLE   DRIFTED   PAYLOAD                               AGE\n",
		"web    cluster1   2           True      False       1                                               120m\n",
		"big    cluster1   9                                           0.6 MiB in 9 chunks, 4 of 9 present   60m\n",
	} {
		assert.Contains(t, out, want)
	}
}

func TestWorkStateLargePayload(t *testing.T) {
	applied := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "R", ObservedGeneration: 1}
	tests := []struct {
		name        string
		conds       []metav1.Condition
		wantState   string
		wantMessage string
	}{
		{"not reported yet", nil, StateProgressing, "staging the payload: 0.6 MiB in 9 chunks"},
		{"chunks missing", []metav1.Condition{applied, staged(metav1.ConditionFalse, payloadv1alpha1.ReasonChunksMissing,
			"generation 2: 3 of 9 chunks (0.2 of 0.6 MiB) present and verified; waiting for [sha256-ab]; the cluster keeps generation 1")},
			StateProgressing, "staging the payload: 0.6 MiB in 9 chunks, 3 of 9 present"},
		{"a damaged chunk", []metav1.Condition{applied, staged(metav1.ConditionFalse, payloadv1alpha1.ReasonChunkDigestMismatch, "generation 2 refused: ManifestChunk sha256-ab is not the chunk")},
			StateFailed, "payload ChunkDigestMismatch: generation 2 refused: ManifestChunk sha256-ab is not the chunk"},
		{"staged, not applied yet", []metav1.Condition{applied, staged(metav1.ConditionTrue, payloadv1alpha1.ReasonPayloadVerified, "")},
			StateProgressing, "waiting for the work agent to apply generation 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := largeWork(t, tt.conds...)
			state, message := workState(&w)
			assert.Equal(t, tt.wantState, state)
			assert.Equal(t, tt.wantMessage, message)
		})
	}
}
