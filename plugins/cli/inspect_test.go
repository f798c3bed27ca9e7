package cli

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

func TestDescribeNotReady(t *testing.T) {
	labels := map[string]string{"app": "ctrl"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hub", Name: "ctrl", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1},
	}
	ready := dep.DeepCopy()
	ready.Name, ready.Status.AvailableReplicas = "ready", 1
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hub", Name: "ctrl-1", Labels: labels},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 node(s) had untolerated taint."}}},
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(dep, ready, pod).Build()
	ctrl, done, missing := types.NamespacedName{Namespace: "hub", Name: "ctrl"}, types.NamespacedName{Namespace: "hub", Name: "ready"}, types.NamespacedName{Namespace: "hub", Name: "gone"}
	cause := "Pod hub/ctrl-1: Unschedulable: 0/1 nodes are available: 1 node(s) had untolerated taint.; to fix: give the Pod a node it fits: " +
		"free or add capacity, or change the node selector, affinity or tolerations that rule the nodes out (`kubectl describe pod -n hub ctrl-1`)"
	tests := []struct {
		name, state string
		keys        []types.NamespacedName
		want        string
	}{
		{"ready and missing Deployments add nothing", "waiting", []types.NamespacedName{done, missing}, "waiting"},
		{"a Deployment the state does not name is described whole", "waiting", []types.NamespacedName{ctrl},
			"waiting; Deployment hub/ctrl: 0 of 1 updated replicas available; " + cause},
		{"a Deployment the state names adds its Pod-level cause", "Deployment hub/ctrl: 0 of 1 updated replicas available", []types.NamespacedName{ctrl},
			"Deployment hub/ctrl: 0 of 1 updated replicas available; " + cause},
		{"without a state", "", []types.NamespacedName{ctrl}, "Deployment hub/ctrl: 0 of 1 updated replicas available; " + cause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeNotReady(t.Context(), NewInspector(c, nil, ImageFlagsFix), tt.state, tt.keys...)
			if got != tt.want {
				t.Errorf("DescribeNotReady = %q, want %q", got, tt.want)
			}
		})
	}
}
