package deploystatus

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// ReasonProgressDeadlineExceeded is the reason of the Progressing condition
// the deployment controller sets when a rollout made no progress within the
// Deployment's spec.progressDeadlineSeconds: it stopped trying.
const ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// Status is what Of concludes about a Deployment.
type Status struct {
	// Done is true when the Deployment is rolled out: the deployment
	// controller has observed its current generation, every desired replica
	// runs the current pod template, no replica of an older template
	// remains, and every updated replica is available.
	Done bool
	// Stalled is true when the deployment controller gave up the rollout
	// (Progressing with reason ProgressDeadlineExceeded): waiting longer
	// changes nothing until the Deployment or its Pods are fixed.
	Stalled bool
	// Serving is true when at least one replica is available, whether or
	// not the rollout is done: some process of the Deployment runs.
	Serving bool
	// Message says what the rollout waits for, or that it is done, such as
	// "1 of 2 updated replicas available".
	Message string
	// Causes are the Deployment's own explanations while it is not done:
	// "Reason: message" of each condition that is not True (and of
	// ReplicaFailure when it is True), in the Deployment's order.
	Causes []string
}

// String is the message followed by the causes, such as "0 of 1 updated
// replicas available (MinimumReplicasUnavailable: Deployment does not have
// minimum availability.)".
func (s Status) String() string {
	if len(s.Causes) == 0 {
		return s.Message
	}
	return s.Message + " (" + strings.Join(s.Causes, "; ") + ")"
}

// Of judges dep by the rule of kubectl's rollout status, in this order:
//   - the deployment controller has not observed dep's generation: not done;
//   - Progressing has reason ProgressDeadlineExceeded: not done, stalled;
//   - fewer updated replicas than spec.replicas (1 when unset, the API
//     default): not done;
//   - more replicas than updated ones, old replicas pending termination:
//     not done;
//   - fewer available replicas than updated ones: not done;
//   - otherwise done.
func Of(dep *appsv1.Deployment) Status {
	st := dep.Status
	s := Status{Serving: st.AvailableReplicas > 0}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	switch {
	case st.ObservedGeneration < dep.Generation:
		s.Message = fmt.Sprintf("the deployment controller has not observed generation %d yet (observed %d)", dep.Generation, st.ObservedGeneration)
	case progressDeadlineExceeded(dep):
		s.Stalled = true
		s.Message = fmt.Sprintf("the rollout exceeded its progress deadline with %d of %d updated replicas available", st.AvailableReplicas, st.UpdatedReplicas)
	case st.UpdatedReplicas < want:
		s.Message = fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)
	case st.Replicas > st.UpdatedReplicas:
		s.Message = fmt.Sprintf("%d old replicas pending termination", st.Replicas-st.UpdatedReplicas)
	case st.AvailableReplicas < st.UpdatedReplicas:
		s.Message = fmt.Sprintf("%d of %d updated replicas available", st.AvailableReplicas, st.UpdatedReplicas)
	default:
		s.Done = true
		s.Message = fmt.Sprintf("rolled out, %d of %d replicas available", st.AvailableReplicas, want)
		return s
	}
	s.Causes = causes(dep)
	return s
}

// progressDeadlineExceeded reports whether dep's Progressing condition says
// the deployment controller gave up its rollout.
func progressDeadlineExceeded(dep *appsv1.Deployment) bool {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == ReasonProgressDeadlineExceeded {
			return true
		}
	}
	return false
}

// causes returns "Reason: message" of each condition of dep that reports a
// problem: ReplicaFailure when True, any other type when not True.
func causes(dep *appsv1.Deployment) []string {
	var out []string
	for _, c := range dep.Status.Conditions {
		failing := c.Status != corev1.ConditionTrue
		if c.Type == appsv1.DeploymentReplicaFailure {
			failing = c.Status == corev1.ConditionTrue
		}
		if !failing || (c.Reason == "" && c.Message == "") {
			continue
		}
		switch {
		case c.Message == "":
			out = append(out, c.Reason)
		case c.Reason == "":
			out = append(out, c.Message)
		default:
			out = append(out, c.Reason+": "+c.Message)
		}
	}
	return out
}
