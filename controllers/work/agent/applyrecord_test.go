package agent

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// captured returns a recorder whose records land in lines, as flows.
func captured(t *testing.T) (*applyRecorder, *[]map[string]any) {
	t.Helper()
	var lines []map[string]any
	log := funcr.NewJSON(func(obj string) {
		m := map[string]any{}
		require.NoError(t, jsonUnmarshal(obj, &m))
		lines = append(lines, m)
	}, funcr.Options{})
	r, err := newApplyRecorder(log)
	require.NoError(t, err)
	return r, &lines
}

func flows(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l["flow"].(string))
	}
	return out
}

func TestApplyRecords(t *testing.T) {
	cm := &unstructured.Unstructured{}
	cm.SetResourceVersion("42")
	ok := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "ConfigMap", Name: "a", Namespace: "ns"}, Object: cm}
	bad := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "Secret", Name: "b", Namespace: "ns"}, Err: errors.New("denied")}
	ro := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "Namespace", Name: "ns"}, Strategy: workv1.UpdateStrategyTypeReadOnly}
	appliedAt := func(gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: gen}}
	}
	prevApplied := &workv1.ManifestCondition{Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue}}}
	tests := []struct {
		name       string
		conditions []metav1.Condition
		results    []apply.Result
		prev       *workv1.ManifestCondition
		want       []string
		wantResult string
	}{
		{name: "a new generation: start, each manifest, result", results: []apply.Result{ok, bad, ro},
			want:       []string{flowSpokeApply, flowResourceSpokeApply, flowResourceSpokeApply, flowResourceSpokeApply, flowSpokeApplyResult},
			wantResult: outcomePartial},
		{name: "a generation already applied, nothing changed: no record", conditions: appliedAt(3), results: []apply.Result{ok}, prev: prevApplied},
		{name: "a generation already applied, a manifest failing now: a sync record", conditions: appliedAt(3), results: []apply.Result{bad}, prev: prevApplied,
			want: []string{flowResourceSpokeSync}},
		{name: "read-only manifests only", results: []apply.Result{ro},
			want: []string{flowSpokeApply, flowResourceSpokeApply, flowSpokeApplyResult}, wantResult: outcomeReadOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, lines := captured(t)
			work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "cluster1", Generation: 3, Labels: map[string]string{"team": "a"}}}
			work.Status.Conditions = tt.conditions
			run := r.begin(work, len(tt.results))
			for i := range tt.results {
				run.resource(&tt.results[i], tt.prev)
			}
			run.end(len(tt.results))
			require.Equal(t, tt.want, flows(*lines))
			if tt.wantResult != "" {
				last := (*lines)[len(*lines)-1]
				require.Equal(t, tt.wantResult, last["outcome"])
				require.Equal(t, "cluster1", last["mw_namespace"])
				require.EqualValues(t, 3, last["generation"])
			}
		})
	}
}

func TestApplyRecordsOncePerGeneration(t *testing.T) {
	r, lines := captured(t)
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "cluster1", Generation: 1}}
	res := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "ConfigMap", Name: "a"}}
	for range 2 { // the status write of the first apply failed: the work is applied again
		run := r.begin(work, 1)
		run.resource(&res, nil)
		run.end(1)
	}
	require.Equal(t, []string{flowSpokeApply, flowResourceSpokeApply, flowSpokeApplyResult}, flows(*lines))
	r.forget("w")
	run := r.begin(work, 1)
	run.end(1)
	require.Len(t, *lines, 5, "a work created again under the same name is recorded again")
}

func TestNilApplyRecorder(t *testing.T) {
	var r *applyRecorder
	run := r.begin(&workv1.ManifestWork{}, 1)
	run.resource(&apply.Result{}, nil)
	run.end(1)
	r.forget("w")
	require.Nil(t, run)
}

// jsonUnmarshal decodes one funcr JSON line.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
