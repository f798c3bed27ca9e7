package deploystatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// deployment returns Deployment ns/foo at generation with spec.replicas
// replicas and status st.
func deployment(generation int64, replicas *int32, st appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "foo", Generation: generation},
		Spec:       appsv1.DeploymentSpec{Replicas: replicas},
		Status:     st,
	}
}

// The first cases are those kubectl's DeploymentStatusViewer is tested on,
// with the same inputs and verdicts.
func TestOf(t *testing.T) {
	unavailable := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
		Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}
	tests := []struct {
		name        string
		dep         *appsv1.Deployment
		wantDone    bool
		wantStalled bool
		wantServing bool
		wantString  string
	}{
		{"kubectl: no replica runs the new template yet", deployment(0, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 0, AvailableReplicas: 1}),
			false, false, true, "0 of 1 replicas updated"},
		{"kubectl: an old replica is pending termination", deployment(1, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2}),
			false, false, true, "1 old replicas pending termination"},
		{"kubectl: an updated replica is not available", deployment(1, ptr.To[int32](2), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1, UnavailableReplicas: 1}),
			false, false, true, "1 of 2 updated replicas available"},
		{"kubectl: rolled out", deployment(1, ptr.To[int32](2), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}),
			true, false, true, "rolled out, 2 of 2 replicas available"},
		{"kubectl: the new generation is not observed yet", deployment(2, ptr.To[int32](2), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}),
			false, false, true, "the deployment controller has not observed generation 2 yet (observed 1)"},
		{"kubectl: the progress deadline passed", deployment(1, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeded, Message: `ReplicaSet "foo-1" has timed out progressing.`}}}),
			false, true, false, `the rollout exceeded its progress deadline with 0 of 1 updated replicas available (ProgressDeadlineExceeded: ReplicaSet "foo-1" has timed out progressing.)`},
		{"kubectl: a Progressing condition of another reason does not stall", deployment(0, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 0, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NotTimedOut"}}}),
			false, false, true, "0 of 1 replicas updated"},
		{"the generation is checked before the deadline", deployment(3, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: ReasonProgressDeadlineExceeded}}}),
			false, false, false, "the deployment controller has not observed generation 3 yet (observed 2) (ProgressDeadlineExceeded)"},
		{"unset spec.replicas means one", deployment(1, nil, appsv1.DeploymentStatus{ObservedGeneration: 1}),
			false, false, false, "0 of 1 replicas updated"},
		{"scaled to zero is rolled out", deployment(1, ptr.To[int32](0), appsv1.DeploymentStatus{ObservedGeneration: 1}),
			true, false, false, "rolled out, 0 of 0 replicas available"},
		{"failing conditions and a replica failure explain a rollout", deployment(1, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{
				unavailable,
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated", Message: "progressing"},
				{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "pods is forbidden"}}}),
			false, false, false, "0 of 1 updated replicas available (MinimumReplicasUnavailable: Deployment does not have minimum availability.; FailedCreate: pods is forbidden)"},
		{"a rolled out Deployment names no cause", deployment(1, ptr.To[int32](1), appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{unavailable}}),
			true, false, true, "rolled out, 1 of 1 replicas available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of(tt.dep)
			assert.Equal(t, tt.wantDone, got.Done, "Done")
			assert.Equal(t, tt.wantStalled, got.Stalled, "Stalled")
			assert.Equal(t, tt.wantServing, got.Serving, "Serving")
			assert.Equal(t, tt.wantString, got.String())
		})
	}
}
