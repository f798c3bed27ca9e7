// Package deploystatustest builds Deployments in the states package
// deploystatus tells apart, for the tests of the code that reports them.
package deploystatustest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// Generation is the generation of the Deployments Deployment returns.
const Generation = 2

// Deployment returns namespace/name at Generation, wanting one replica,
// with status st.
func Deployment(namespace, name string, st appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: Generation},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status:     st,
	}
}

// RolledOut is the status of a Deployment whose one replica is updated
// and available.
func RolledOut() appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{ObservedGeneration: Generation, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
}

// NotObserved is the status of a Deployment whose controller has not seen
// its newest generation.
func NotObserved() appsv1.DeploymentStatus {
	st := RolledOut()
	st.ObservedGeneration = Generation - 1
	return st
}

// OldReplicaPending is the status of a Deployment with an old replica
// still running next to the updated one.
func OldReplicaPending() appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{ObservedGeneration: Generation, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2}
}

// Unavailable is the status of a Deployment whose updated replica is not
// available, its Available condition False for reason with message.
func Unavailable(reason, message string) appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{ObservedGeneration: Generation, Replicas: 1, UpdatedReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: reason, Message: message}}}
}

// PastDeadline is the status of a Deployment whose rollout exceeded its
// progress deadline, with message.
func PastDeadline(message string) appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{ObservedGeneration: Generation, Replicas: 1, UpdatedReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: deploystatus.ReasonProgressDeadlineExceeded, Message: message}}}
}
