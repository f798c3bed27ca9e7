package agent

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestDetectDrift(t *testing.T) {
	manifestYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default, labels: {app: x}}\ndata: {a: \"1\"}\n"
	editedYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default, uid: u1, resourceVersion: \"2\", labels: {app: x}}\ndata: {a: \"2\"}\n"
	liveYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default, uid: u1, resourceVersion: \"3\", labels: {app: x}}\ndata: {a: \"1\"}\n"
	m := workv1.ManifestResourceMeta{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "c", Namespace: "default"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	applied := func(gen int64) []workv1.ManifestCondition {
		return []workv1.ManifestCondition{{ResourceMeta: m, Conditions: []metav1.Condition{
			{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, ObservedGeneration: gen},
			{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, ObservedGeneration: gen},
		}}}
	}
	result := func(st workv1.UpdateStrategyType, change apply.Change, before, after string) apply.Result {
		r := apply.Result{Meta: m, GVR: gvr, Strategy: st, Change: change}
		if before != "" {
			r.Before = object(t, before)
		}
		if after != "" {
			r.Object = object(t, after)
		}
		return r
	}
	tests := []struct {
		name       string
		prev       []workv1.ManifestCondition
		results    []apply.Result // reconciles in order; the last one's drift is checked
		wantReason string
		wantParts  []string
	}{
		{name: "Update rewrote an edited object", prev: applied(1),
			results:    []apply.Result{result(workv1.UpdateStrategyTypeUpdate, apply.ChangeUpdated, editedYAML, liveYAML)},
			wantReason: workv1.DriftReasonModified, wantParts: []string{"ConfigMap default/c was modified", "(changed: data.a)", "; restored"}},
		{name: "ServerSideApply recreated a deleted object", prev: applied(1),
			results:    []apply.Result{result(workv1.UpdateStrategyTypeServerSideApply, apply.ChangeCreated, "", liveYAML)},
			wantReason: workv1.DriftReasonDeleted, wantParts: []string{"was deleted", "created again"}},
		{name: "nothing written, no drift", prev: applied(1),
			results: []apply.Result{result(workv1.UpdateStrategyTypeUpdate, apply.ChangeNone, liveYAML, liveYAML)}},
		{name: "write after a spec change is no drift", prev: applied(0),
			results: []apply.Result{result(workv1.UpdateStrategyTypeUpdate, apply.ChangeUpdated, editedYAML, liveYAML)}},
		{name: "first apply is no drift",
			results: []apply.Result{result(workv1.UpdateStrategyTypeUpdate, apply.ChangeCreated, "", liveYAML)}},
		{name: "CreateOnly first look records only", prev: applied(1),
			results: []apply.Result{result(workv1.UpdateStrategyTypeCreateOnly, apply.ChangeNone, editedYAML, editedYAML)}},
		{name: "CreateOnly edited since the last look", prev: applied(1),
			results: []apply.Result{
				result(workv1.UpdateStrategyTypeCreateOnly, apply.ChangeNone, liveYAML, liveYAML),
				result(workv1.UpdateStrategyTypeCreateOnly, apply.ChangeNone, editedYAML, editedYAML),
			},
			wantReason: workv1.DriftReasonModified, wantParts: []string{"data.a", "not restored (update strategy CreateOnly)"}},
		{name: "CreateOnly edited back to the manifest is no drift", prev: applied(1),
			results: []apply.Result{
				result(workv1.UpdateStrategyTypeCreateOnly, apply.ChangeNone, editedYAML, editedYAML),
				result(workv1.UpdateStrategyTypeCreateOnly, apply.ChangeNone, liveYAML, liveYAML),
			}},
		{name: "ReadOnly object deleted", prev: applied(1),
			results:    []apply.Result{result(workv1.UpdateStrategyTypeReadOnly, apply.ChangeNone, "", "")},
			wantReason: workv1.DriftReasonDeleted, wantParts: []string{"not restored (update strategy ReadOnly)"}},
		{name: "frozen manifest is not checked", prev: applied(1),
			results: []apply.Result{{Meta: m, GVR: gvr, Frozen: true, Strategy: workv1.UpdateStrategyTypeUpdate}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := &workv1.ManifestWork{}
			work.Namespace, work.Name, work.Generation = "cluster1", "w", 1
			manifest := object(t, manifestYAML)
			dd := newDriftDetector()
			var drifts []drift
			for _, r := range tt.results {
				drifts = nil
				if d, ok := dd.detect(work, tt.prev, &r, manifest, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); ok {
					drifts = append(drifts, d)
				}
			}
			if tt.wantReason == "" {
				if len(drifts) != 0 {
					t.Errorf("drifts = %+v, want none", drifts)
				}
				return
			}
			if len(drifts) != 1 || drifts[0].reason != tt.wantReason {
				t.Fatalf("drifts = %+v, want one %s", drifts, tt.wantReason)
			}
			msg := drifts[0].message()
			for _, p := range append(tt.wantParts, "at 2026-01-02T03:04:05Z") {
				if !strings.Contains(msg, p) {
					t.Errorf("message %q lacks %q", msg, p)
				}
			}
		})
	}
}

func TestRecordDrifts(t *testing.T) {
	m := workv1.ManifestResourceMeta{Kind: "ConfigMap", Name: "c"}
	work := &workv1.ManifestWork{}
	work.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{ResourceMeta: m}}
	r := &workReconciler{}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.recordDrifts(work, []drift{{meta: m, reason: workv1.DriftReasonModified, restored: true, at: at}})
	r.recordDrifts(work, []drift{{meta: m, reason: workv1.DriftReasonDeleted, restored: true, at: at.Add(time.Minute)}})
	c := work.Status.ResourceStatus.Manifests[0].Conditions
	if len(c) != 1 || c[0].Type != workv1.ManifestDrifted || c[0].Reason != workv1.DriftReasonDeleted || !c[0].LastTransitionTime.Time.Equal(at.Add(time.Minute)) {
		t.Errorf("conditions = %+v, want the last drift", c)
	}
}

// TestCarryDrifts checks that a drift whose record the hub has not stored is
// recorded again by the next reconcile, which finds nothing new, and is
// dropped once a stored status holds it.
func TestCarryDrifts(t *testing.T) {
	a := workv1.ManifestResourceMeta{Ordinal: 0, Kind: "ConfigMap", Name: "a"}
	b := workv1.ManifestResourceMeta{Ordinal: 1, Kind: "ConfigMap", Name: "b"}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "w"}}
	work.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{ResourceMeta: a}, {ResourceMeta: b}}
	key := types.NamespacedName{Namespace: "c1", Name: "w"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 678, time.UTC)
	dd := newDriftDetector()
	r := &workReconciler{drifts: dd}

	first := dd.carry(key, []drift{{meta: a, reason: workv1.DriftReasonModified, restored: true, at: at}})
	if len(first) != 1 {
		t.Fatalf("carry = %v, want the found drift", first)
	}
	// The status patch failed: the next reconcile finds nothing new.
	again := dd.carry(key, nil)
	if len(again) != 1 || again[0].meta != a {
		t.Fatalf("carry after a failed patch = %v, want the unwritten drift of a", again)
	}
	// A newer drift of b joins it; a newer one of a replaces it.
	both := dd.carry(key, []drift{{meta: b, reason: workv1.DriftReasonDeleted, restored: true, at: at}, {meta: a, reason: workv1.DriftReasonDeleted, restored: true, at: at.Add(time.Second)}})
	if len(both) != 2 || both[1].reason != workv1.DriftReasonDeleted {
		t.Fatalf("carry = %+v, want b and the newer drift of a", both)
	}
	// The stored status holds a's record only (second precision, as the API
	// server stores times).
	stored := work.DeepCopy()
	r.recordDrifts(stored, both[1:])
	stored.Status.ResourceStatus.Manifests[0].Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Second).Truncate(time.Second))
	dd.written(stored)
	if left := dd.carry(key, nil); len(left) != 1 || left[0].meta != b {
		t.Fatalf("after a's record was stored, carry = %+v, want b only", left)
	}
	r.recordDrifts(stored, []drift{{meta: b, reason: workv1.DriftReasonDeleted, restored: true, at: at}})
	stored.Status.ResourceStatus.Manifests[1].Conditions[0].LastTransitionTime = metav1.NewTime(at.Truncate(time.Second))
	dd.written(stored)
	if left := dd.carry(key, nil); len(left) != 0 {
		t.Errorf("after every record was stored, carry = %+v, want none", left)
	}
}
