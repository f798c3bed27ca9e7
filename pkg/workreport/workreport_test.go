package workreport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
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

// largeWork is a work whose one manifest is the payload of three
// ConfigMaps, at generation 2.
func largeWork(t *testing.T) *workv1.ManifestWork {
	t.Helper()
	ref, _, err := payload.Split("app", []workv1.Manifest{
		raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`),
		raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"default"}}`),
		raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`),
	})
	require.NoError(t, err)
	// Three chunks of 2 MiB in all, as a larger payload would list them.
	ref.Spec.Chunks = append(ref.Spec.Chunks, ref.Spec.Chunks[0], ref.Spec.Chunks[0])
	for i := range ref.Spec.Chunks {
		ref.Spec.Chunks[i].Size = 2 << 20 / 3
	}
	ref.Spec.Chunks[0].Size += 2<<20 - 3*(2<<20/3)
	ref.Spec.Size = 2 << 20
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "cluster1", Generation: 2},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m}}},
	}
}

func TestPayloadOf(t *testing.T) {
	staged := func(status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
		return metav1.Condition{Type: payloadv1alpha1.WorkPayloadStaged, Status: status, Reason: reason, Message: message, ObservedGeneration: generation}
	}
	waiting := payload.Progress{Chunks: 3, Bytes: 2 << 20, PresentChunks: 2, PresentBytes: 1 << 20}
	tests := []struct {
		name        string
		conds       []metav1.Condition
		wantSummary string
		wantPresent *int64
	}{
		{"not reported yet", nil, "2.0 MiB in 3 chunks", nil},
		{"reported for an earlier generation", []metav1.Condition{staged(metav1.ConditionTrue, payloadv1alpha1.ReasonPayloadVerified, "", 1)},
			"2.0 MiB in 3 chunks", nil},
		{"staging", []metav1.Condition{staged(metav1.ConditionFalse, payloadv1alpha1.ReasonChunksMissing,
			"generation 2: "+waiting.String()+"; waiting for [sha256-ab]; the cluster keeps generation 1", 2)},
			"2.0 MiB in 3 chunks, 2 of 3 present", ptr.To[int64](2)},
		{"staged", []metav1.Condition{staged(metav1.ConditionTrue, payloadv1alpha1.ReasonPayloadVerified, "generation 2: all 3 chunks", 2)},
			"2.0 MiB in 3 chunks, staged", ptr.To[int64](3)},
		{"a damaged chunk", []metav1.Condition{staged(metav1.ConditionFalse, payloadv1alpha1.ReasonChunkDigestMismatch, "generation 2 refused", 2)},
			"2.0 MiB in 3 chunks, ChunkDigestMismatch", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := largeWork(t)
			w.Status.Conditions = tt.conds
			got := PayloadOf(w)
			require.NotNil(t, got)
			assert.Equal(t, int64(2<<20), got.Size)
			assert.Equal(t, int64(3), got.Chunks)
			assert.Equal(t, int64(3), got.Manifests)
			assert.Equal(t, tt.wantPresent, got.PresentChunks)
			assert.Equal(t, tt.wantSummary, got.Summary())
		})
	}

	t.Run("a small work has none", func(t *testing.T) {
		w := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`)}}}}
		assert.Nil(t, PayloadOf(w))
		assert.Nil(t, New(w).Payload)
	})
	t.Run("a payload beside other manifests is invalid", func(t *testing.T) {
		w := largeWork(t)
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`))
		got := PayloadOf(w)
		require.NotNil(t, got)
		assert.Equal(t, payloadv1alpha1.ReasonInvalidPayload, got.Reason)
		assert.Contains(t, got.Summary(), "must be the only manifest of its work")
	})
	t.Run("the report lists the payload's manifests as the agent reported them", func(t *testing.T) {
		w := largeWork(t)
		report := New(w)
		assert.Empty(t, report.Manifests, "nothing is reported before the payload is staged")
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{
			reported(0, "ConfigMap", "", "default", "a"), reported(1, "ConfigMap", "", "default", "b"), reported(2, "ConfigMap", "", "default", "c")}
		report = New(w)
		require.NotNil(t, report.Payload)
		var names []string
		for _, m := range report.Manifests {
			names = append(names, m.Name)
		}
		assert.Equal(t, []string{"a", "b", "c"}, names)
	})
}
