package config

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestScheduling checks that Scheduling reaches the Pods of the hub
// controller and of the agents, and that without it they keep their own
// resources and no node constraints.
func TestScheduling(t *testing.T) {
	s := Scheduling{
		NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ocm", Effect: corev1.TaintEffectNoSchedule}},
		Resources:    &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}},
	}
	hubDefault := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	render := func(kind string, s Scheduling) ([]*unstructured.Unstructured, error) {
		switch kind {
		case "hub":
			return HubObjects(HubValues{Scheduling: s})
		case "agent":
			return AgentObjects(AgentValues{ClusterName: "cluster1", Scheduling: s})
		default:
			hosting, _, err := HostedAgentObjects(AgentValues{ClusterName: "cluster1", Scheduling: s})
			return hosting, err
		}
	}
	tests := []struct {
		name          string
		kind          string
		scheduling    Scheduling
		wantResources corev1.ResourceRequirements
	}{
		{name: "hub, none", kind: "hub", wantResources: hubDefault},
		{name: "hub, set", kind: "hub", scheduling: s, wantResources: *s.Resources},
		{name: "agent, none", kind: "agent"},
		{name: "agent, set", kind: "agent", scheduling: s, wantResources: *s.Resources},
		{name: "hosted agent, set", kind: "hosted", scheduling: s, wantResources: *s.Resources},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render(tt.kind, tt.scheduling)
			if err != nil {
				t.Fatal(err)
			}
			var dep *appsv1.Deployment
			for _, o := range objs {
				if o.GetKind() == "Deployment" {
					dep = &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, dep); err != nil {
						t.Fatal(err)
					}
				}
			}
			if dep == nil {
				t.Fatal("no Deployment rendered")
			}
			pod := dep.Spec.Template.Spec
			if !apiequality.Semantic.DeepEqual(pod.NodeSelector, tt.scheduling.NodeSelector) {
				t.Errorf("nodeSelector %v, want %v", pod.NodeSelector, tt.scheduling.NodeSelector)
			}
			if !apiequality.Semantic.DeepEqual(pod.Tolerations, tt.scheduling.Tolerations) {
				t.Errorf("tolerations %v, want %v", pod.Tolerations, tt.scheduling.Tolerations)
			}
			if got := pod.Containers[0].Resources; !apiequality.Semantic.DeepEqual(got, tt.wantResources) {
				t.Errorf("resources %v, want %v", got, tt.wantResources)
			}
		})
	}
}
