package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// result builds an apply result for a ConfigMap manifest.
func result(ordinal int32, name string, err error, uid string, strategy workv1.UpdateStrategyType) apply.Result {
	r := apply.Result{
		Meta:     workv1.ManifestResourceMeta{Ordinal: ordinal, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: name, Namespace: "ns"},
		GVR:      schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Err:      err,
		Strategy: strategy,
	}
	if err == nil {
		r.Object = &unstructured.Unstructured{}
		r.Object.SetUID(typesUID(uid))
	}
	return r
}

// applied builds an applied-resource entry of ConfigMap name.
func applied(name, uid string) workv1.AppliedManifestResourceMeta {
	return workv1.AppliedManifestResourceMeta{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "ns", Name: name},
		Version:            "v1", UID: uid,
	}
}

func TestPlannedResources(t *testing.T) {
	failed := errors.New("boom")
	update := workv1.UpdateStrategyTypeUpdate
	tests := []struct {
		name      string
		prev      []workv1.AppliedManifestResourceMeta
		results   []apply.Result
		wantNext  []string
		wantStale []string
	}{
		{name: "first apply", results: []apply.Result{result(0, "b", nil, "ub", update), result(1, "a", nil, "ua", update)}, wantNext: []string{"a/ua", "b/ub"}},
		{name: "removed manifest is stale", prev: []workv1.AppliedManifestResourceMeta{applied("a", "ua"), applied("b", "ub")},
			results: []apply.Result{result(0, "a", nil, "ua", update)}, wantNext: []string{"a/ua"}, wantStale: []string{"b/ub"}},
		{name: "failed manifest keeps its entry", prev: []workv1.AppliedManifestResourceMeta{applied("a", "ua")},
			results: []apply.Result{result(0, "a", failed, "", update)}, wantNext: []string{"a/ua"}},
		{name: "recreated object gets new UID", prev: []workv1.AppliedManifestResourceMeta{applied("a", "old")},
			results: []apply.Result{result(0, "a", nil, "new", update)}, wantNext: []string{"a/new"}},
		{name: "ReadOnly is neither recorded nor deleted", prev: []workv1.AppliedManifestResourceMeta{applied("a", "ua")},
			results: []apply.Result{result(0, "a", nil, "ua", workv1.UpdateStrategyTypeReadOnly)}, wantNext: []string{"a/ua"}},
		{name: "unmapped manifest protects its entry", prev: []workv1.AppliedManifestResourceMeta{applied("a", "ua")},
			results: []apply.Result{{Meta: workv1.ManifestResourceMeta{Kind: "ConfigMap", Name: "a", Namespace: "ns"}, Err: failed}}, wantNext: []string{"a/ua"}},
	}
	names := func(rs []workv1.AppliedManifestResourceMeta) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name+"/"+r.UID)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, stale := plannedResources(tt.prev, tt.results)
			if strings.Join(names(next), ",") != strings.Join(tt.wantNext, ",") || strings.Join(names(stale), ",") != strings.Join(tt.wantStale, ",") {
				t.Errorf("next %v stale %v, want %v and %v", names(next), names(stale), tt.wantNext, tt.wantStale)
			}
		})
	}
}

func TestWorkConditions(t *testing.T) {
	obs := func(exists bool, err error, unknown bool) manifestObservation {
		r := &apply.Result{Err: err}
		return manifestObservation{Result: r, exists: exists, unknownMeta: unknown}
	}
	failed := errors.New(`configmaps "x" is forbidden`)
	tests := []struct {
		name          string
		obs           []manifestObservation
		wantApplied   metav1.ConditionStatus
		wantAvailable metav1.ConditionStatus
		wantReason    string
	}{
		{name: "all good", obs: []manifestObservation{obs(true, nil, false), obs(true, nil, false)},
			wantApplied: metav1.ConditionTrue, wantAvailable: metav1.ConditionTrue, wantReason: workv1.WorkAvailableReasonAvailable},
		{name: "one missing", obs: []manifestObservation{obs(true, nil, false), obs(false, failed, false)},
			wantApplied: metav1.ConditionFalse, wantAvailable: metav1.ConditionFalse, wantReason: workv1.WorkAvailableReasonNotAvailable},
		{name: "one unknown", obs: []manifestObservation{obs(true, nil, false), obs(false, failed, true)},
			wantApplied: metav1.ConditionFalse, wantAvailable: metav1.ConditionUnknown, wantReason: workv1.WorkAvailableReasonStatusUnknown},
		{name: "failed update of existing object", obs: []manifestObservation{obs(true, failed, false)},
			wantApplied: metav1.ConditionFalse, wantAvailable: metav1.ConditionTrue, wantReason: workv1.WorkAvailableReasonAvailable},
		{name: "missing beats unknown", obs: []manifestObservation{obs(false, failed, true), obs(false, failed, false)},
			wantApplied: metav1.ConditionFalse, wantAvailable: metav1.ConditionFalse, wantReason: workv1.WorkAvailableReasonNotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.obs {
				tt.obs[i].Meta.Ordinal = int32(i)
			}
			w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			setWorkStatus(w, tt.obs, nil)
			applied := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
			available := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
			if applied.Status != tt.wantApplied || available.Status != tt.wantAvailable || available.Reason != tt.wantReason {
				t.Errorf("Applied %+v, Available %+v", applied, available)
			}
			if applied.ObservedGeneration != 3 || available.ObservedGeneration != 3 {
				t.Error("conditions lack the observed generation")
			}
			if tt.wantApplied == metav1.ConditionTrue && (applied.Reason != workv1.WorkAppliedReasonComplete || applied.Message != "Apply manifest work complete") {
				t.Errorf("Applied = %+v", applied)
			}
			for i, o := range tt.obs {
				c := meta.FindStatusCondition(w.Status.ResourceStatus.Manifests[i].Conditions, workv1.ManifestApplied)
				if o.Err != nil && (c.Reason != workv1.ManifestAppliedReasonFailed || !strings.Contains(c.Message, o.Err.Error())) {
					t.Errorf("manifest %d Applied = %+v", i, c)
				}
			}
		})
	}
}

func TestSetWorkStatusKeepsForeignConditions(t *testing.T) {
	m := workv1.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "a", Namespace: "ns"}
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	w := &workv1.ManifestWork{}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkProgressing, Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: past}}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{ResourceMeta: m, Conditions: []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.ManifestAppliedReasonComplete, Message: "Apply manifest complete", LastTransitionTime: past},
		{Type: "Complete", Status: metav1.ConditionFalse, Reason: "R", LastTransitionTime: past},
	}}}
	before := w.DeepCopy()
	setWorkStatus(w, []manifestObservation{{Result: &apply.Result{Meta: m}, exists: true}}, nil)
	if meta.FindStatusCondition(w.Status.Conditions, workv1.WorkProgressing) == nil {
		t.Error("work-level Progressing dropped")
	}
	mc := w.Status.ResourceStatus.Manifests[0]
	if meta.FindStatusCondition(mc.Conditions, "Complete") == nil {
		t.Error("manifest condition of a rule dropped")
	}
	if c := meta.FindStatusCondition(mc.Conditions, workv1.ManifestApplied); !c.LastTransitionTime.Equal(&past) {
		t.Errorf("unchanged Applied moved its transition time: %v", c.LastTransitionTime)
	}
	// A second pass with the same observations changes nothing: no patch.
	again := w.DeepCopy()
	setWorkStatus(again, []manifestObservation{{Result: &apply.Result{Meta: m}, exists: true}}, nil)
	if !equalStatus(w, again) || equalStatus(before, w) {
		t.Error("status is not stable across identical passes")
	}
}

func TestRetryDelay(t *testing.T) {
	noMatch := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "Widget"}, Err: &meta.NoKindMatchError{}}
	crd := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "CustomResourceDefinition"}}
	invalid := apply.Result{Meta: workv1.ManifestResourceMeta{Kind: "ConfigMap"}, Err: errors.New("invalid")}
	tests := []struct {
		name    string
		backoff time.Duration
		pending bool
		results []apply.Result
		want    time.Duration
	}{
		{name: "CRD of the same work establishing", backoff: 2 * time.Second, results: []apply.Result{crd, noMatch}, want: retrySoonDelay},
		{name: "kind nobody defines", backoff: 100 * time.Millisecond, results: []apply.Result{noMatch}, want: time.Second},
		{name: "invalid manifest backs off", backoff: time.Minute, results: []apply.Result{invalid}, want: time.Minute},
		{name: "deletion pending", backoff: time.Minute, pending: true, want: retrySoonDelay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryDelay(tt.backoff, tt.pending, tt.results); got != tt.want {
				t.Errorf("retryDelay = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWorkChanged(t *testing.T) {
	base := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1, Finalizers: []string{"f"}}}
	now := metav1.Now()
	tests := []struct {
		name   string
		mutate func(*workv1.ManifestWork)
		want   bool
	}{
		{name: "status only", mutate: func(w *workv1.ManifestWork) { w.Status.Conditions = []metav1.Condition{{Type: "Applied"}} }},
		{name: "spec", mutate: func(w *workv1.ManifestWork) { w.Generation = 2 }, want: true},
		{name: "deletion", mutate: func(w *workv1.ManifestWork) { w.DeletionTimestamp = &now }, want: true},
		{name: "finalizer removed", mutate: func(w *workv1.ManifestWork) { w.Finalizers = nil }, want: true},
		{name: "label", mutate: func(w *workv1.ManifestWork) { w.Labels = map[string]string{"a": "b"} }, want: true},
	}
	p := workChanged()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.mutate(n)
			if got := p.Update(event.TypedUpdateEvent[*workv1.ManifestWork]{ObjectOld: base, ObjectNew: n}); got != tt.want {
				t.Errorf("workChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
