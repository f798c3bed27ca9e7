package workreport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

var changed = metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))

// cond returns a condition of type typ with status, reason R and message.
func cond(typ string, status metav1.ConditionStatus, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R", Message: message, LastTransitionTime: changed}
}

// raw returns a manifest of the given JSON.
func raw(s string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

// reported returns what the agent reported of manifest ordinal.
func reported(ordinal int32, kind, group, ns, name string, conds ...metav1.Condition) workv1.ManifestCondition {
	return workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Kind: kind, Group: group, Version: "v1", Namespace: ns, Name: name},
		Conditions:   conds,
	}
}

func TestNew(t *testing.T) {
	deployment := reported(0, "Deployment", "apps", "default", "web",
		cond(workv1.ManifestApplied, metav1.ConditionTrue, ""), cond(workv1.ManifestAvailable, metav1.ConditionFalse, "not found"),
		cond(workv1.ManifestDrifted, metav1.ConditionTrue, "spec.replicas changed"))
	deployment.StatusFeedbacks.Values = []workv1.FeedbackValue{
		{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](2)}},
		{Name: "Phase", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("Running")}},
	}
	unknown := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Ordinal: 2},
		Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: "DecodeFailed"}}}
	work := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "cluster1"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			raw(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`),
			raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"}}`),
			raw(`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w"}}`),
		}}},
		Status: workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{cond(workv1.WorkApplied, metav1.ConditionTrue, "")},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
				// A manifest the spec no longer has comes last.
				reported(5, "Secret", "", "default", "old"), unknown, deployment,
			}},
		},
	}

	got := New(work)
	assert.Equal(t, "web", got.Name)
	assert.Equal(t, "cluster1", got.Cluster)
	assert.Equal(t, work.Status.Conditions, got.Conditions)
	assert.Equal(t, []ManifestStatus{
		{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web",
			Applied: "True", Available: "False", Feedback: map[string]any{"ReadyReplicas": int64(2), "Phase": "Running"},
			LastDrift: &changed, DriftReason: "R", Message: "Available: not found; Drifted: spec.replicas changed", Conditions: deployment.Conditions},
		{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cm", Message: NotReported},
		{Ordinal: 2, Group: "example.com", Version: "v2", Kind: "Widget", Name: "w", Applied: "False",
			Message: "Applied: DecodeFailed", Conditions: unknown.Conditions},
		{Ordinal: 5, Version: "v1", Kind: "Secret", Namespace: "default", Name: "old"},
	}, got.Manifests, "the spec's manifests in order, an object the agent could not tell named by the spec, then the stale entry")
}
