package join

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// joinDeployment returns Deployment namespace/name with one replica
// updated, available when ready, whose Pods carry label app=name.
func joinDeployment(namespace, name string, ready bool) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1},
	}
	if ready {
		d.Status.AvailableReplicas = 1
	}
	return d
}

// joinPod returns a Pod of Deployment namespace/name whose container c is
// in state.
func joinPod(namespace, name string, state corev1.ContainerState, last *corev1.ContainerStateTerminated) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-abc", Labels: map[string]string{"app": name}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "quay.io/kubectl-ocm/ocm-controller:v1",
			State: state, LastTerminationState: corev1.ContainerState{Terminated: last}, RestartCount: 4}}},
	}
}

func TestObservePodCauses(t *testing.T) {
	agentNS := config.AgentNamespace
	klusterlet := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName, Generation: 1},
		Status: operatorv1.KlusterletStatus{
			Conditions: []metav1.Condition{{Type: operatorv1.ConditionKlusterletAvailable, Status: metav1.ConditionFalse, Reason: operatorv1.ReasonKlusterletNoAvailablePods,
				Message: "Deployment open-cluster-management-agent/klusterlet-agent: 0 of 1 updated replicas available"}},
			Generations: []operatorv1.GenerationStatus{{Group: "apps", Version: "v1", Resource: "deployments", Namespace: agentNS, Name: config.AgentDeployment}},
		},
	}
	pullBackOff := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: deploystatus.ReasonImagePullBackOff, Message: "not found"}}
	crashLoop := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: deploystatus.ReasonCrashLoopBackOff}}
	tests := []struct {
		name       string
		objs       []client.Object
		wantStep   string
		wantDetail []string
	}{
		{"an operator that cannot pull its image", []client.Object{
			joinDeployment(operatorv1.OperatorNamespace, config.KlusterletOperatorName, false),
			joinPod(operatorv1.OperatorNamespace, config.KlusterletOperatorName, pullBackOff, nil),
		}, "operator starting", []string{
			"Deployment open-cluster-management/klusterlet: 0 of 1 updated replicas available",
			"Pod open-cluster-management/klusterlet-abc, container c: ImagePullBackOff for image quay.io/kubectl-ocm/ocm-controller:v1: not found; to fix: ",
		}},
		{"an operator whose Pods show nothing", []client.Object{
			joinDeployment(operatorv1.OperatorNamespace, config.KlusterletOperatorName, false),
		}, "operator starting", []string{"check its Pods with `kubectl -n open-cluster-management describe pods`"}},
		{"an agent in a crash loop", []client.Object{
			joinDeployment(operatorv1.OperatorNamespace, config.KlusterletOperatorName, true), klusterlet,
			joinDeployment(agentNS, config.AgentDeployment, false),
			joinPod(agentNS, config.AgentDeployment, crashLoop, &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}),
		}, "agent starting", []string{
			"Deployment open-cluster-management-agent/klusterlet-agent: 0 of 1 updated replicas available; " +
				"Pod open-cluster-management-agent/klusterlet-agent-abc, container c: CrashLoopBackOff; last exit code 1 (Error) after 4 restarts; to fix: its log says why it exits",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spoke := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(tt.objs...).Build()
			hub := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
			o := validOptions()
			s, err := o.observe(t.Context(), spoke, hub, deploystatus.NewInspector(spoke, nil))
			if err != nil {
				t.Fatal(err)
			}
			if s.step != tt.wantStep || s.done {
				t.Errorf("step %q (done %v), want %q", s.step, s.done, tt.wantStep)
			}
			for _, w := range tt.wantDetail {
				if !strings.Contains(s.detail, w) {
					t.Errorf("detail lacks %q:\n%s", w, s.detail)
				}
			}
			if n := strings.Count(s.detail, "Deployment open-cluster-management-agent/klusterlet-agent"); n > 1 {
				t.Errorf("detail names the agent Deployment %d times:\n%s", n, s.detail)
			}
		})
	}
}
