package runner

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reasons of the False Progressing condition the component Runner writes on a
// Deployment whose process is not running. The kubelet-style names are the
// ones a Pod would show for the same cause.
const (
	// ReasonImageNotMapped means the first container's image maps to no
	// local binary (see Options.Binaries).
	ReasonImageNotMapped = "ImageNotMapped"
	// ReasonWaitingForServiceAccount means the pod's ServiceAccount does
	// not exist yet, so no token can be requested.
	ReasonWaitingForServiceAccount = "WaitingForServiceAccount"
	// ReasonFailedMount means a Secret or ConfigMap volume cannot be filled,
	// usually because the object does not exist yet.
	ReasonFailedMount = "FailedMount"
	// ReasonCreateContainerConfigError means the container's env refers to a
	// missing Secret, ConfigMap or key, or uses something the Runner does not
	// support.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonStartFailed means preparing the process failed unexpectedly.
	ReasonStartFailed = "StartFailed"
	// ReasonProcessFailed means the process exited (or could not be executed)
	// and will be restarted after a back-off.
	ReasonProcessFailed = "ProcessFailed"
)

// Reasons of the Deployment conditions, as the deployment controller writes them.
const (
	deploymentReasonAvailable   = "MinimumReplicasAvailable"
	deploymentReasonUnavailable = "MinimumReplicasUnavailable"
	deploymentReasonNewRSReady  = "NewReplicaSetAvailable"
	deploymentReasonCreating    = "ContainerCreating"
)

// runnerObservation is what the Runner knows about a Deployment's process: the
// input of the Deployment's status.
type runnerObservation struct {
	desired  bool // spec.replicas is not 0 and the Deployment is not being deleted
	pid      int  // the running process, 0 if none
	binary   string
	restarts int
	reason   string // why no process runs, when desired and pid is 0
	message  string
	logPath  string
}

// observe summarizes inst for the Deployment's status.
func (inst *instance) observe(desired bool) runnerObservation {
	o := runnerObservation{desired: desired, binary: inst.binary, restarts: inst.restarts, logPath: inst.logPath}
	switch {
	case !desired:
	case inst.proc != nil:
		o.pid = inst.proc.Pid()
	case inst.blocked != nil:
		o.reason, o.message = inst.blocked.reason, inst.blocked.Error()
	case inst.lastExit != "":
		o.reason = ReasonProcessFailed
		o.message = fmt.Sprintf("%s; restart %d follows after a back-off of %s; see the log %s",
			inst.lastExit, inst.restarts, inst.backoff, inst.logPath)
	default:
		o.reason, o.message = deploymentReasonCreating, "the component runner is starting the process"
	}
	return o
}

// deploymentStatus computes the status the deployment controller would write
// if the process were the Deployment's one Pod. Conditions keep their
// transition times while their status does not change; other conditions and
// collisionCount are kept as they are.
func deploymentStatus(dep *appsv1.Deployment, obs runnerObservation, now time.Time) appsv1.DeploymentStatus {
	st := appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation,
		CollisionCount:     dep.Status.CollisionCount,
		Conditions:         append([]appsv1.DeploymentCondition(nil), dep.Status.Conditions...),
	}
	desired := int32(0)
	if obs.desired {
		desired = 1
		if dep.Spec.Replicas != nil {
			desired = *dep.Spec.Replicas
		}
		st.Replicas, st.UpdatedReplicas = 1, 1
		if obs.pid != 0 {
			st.ReadyReplicas, st.AvailableReplicas = 1, 1
		}
	}
	st.UnavailableReplicas = max(0, desired-st.AvailableReplicas)

	available := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: deploymentReasonAvailable, Message: "Deployment has minimum availability."}
	progressing := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
		Reason: deploymentReasonNewRSReady}
	switch {
	case !obs.desired:
		progressing.Message = "component runner: scaled to 0, no process runs"
	case obs.pid != 0:
		progressing.Message = fmt.Sprintf("component runner: process %d runs %s; log %s", obs.pid, obs.binary, obs.logPath)
		if obs.restarts > 0 {
			progressing.Message += fmt.Sprintf(" (restarted %d times)", obs.restarts)
		}
	default:
		available.Status, available.Reason = corev1.ConditionFalse, deploymentReasonUnavailable
		available.Message = "Deployment does not have minimum availability: " + obs.message
		progressing.Status, progressing.Reason, progressing.Message = corev1.ConditionFalse, obs.reason, obs.message
	}
	t := metav1.NewTime(now.Truncate(time.Second))
	st.Conditions = setDeploymentCondition(st.Conditions, available, t)
	st.Conditions = setDeploymentCondition(st.Conditions, progressing, t)
	return st
}

// setDeploymentCondition sets cond in conds: unchanged when status, reason and
// message are equal; keeping lastTransitionTime when only reason or message
// change; otherwise with both times now.
func setDeploymentCondition(conds []appsv1.DeploymentCondition, cond appsv1.DeploymentCondition, now metav1.Time) []appsv1.DeploymentCondition {
	cond.LastUpdateTime, cond.LastTransitionTime = now, now
	for i, cur := range conds {
		if cur.Type != cond.Type {
			continue
		}
		if cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
			return conds
		}
		if cur.Status == cond.Status {
			cond.LastTransitionTime = cur.LastTransitionTime
		}
		conds[i] = cond
		return conds
	}
	return append(conds, cond)
}

// patchStatus writes the status computed from obs to dep's status
// subresource, only when it differs from the current one.
func (c *clusterRunner) patchStatus(ctx context.Context, dep *appsv1.Deployment, obs runnerObservation) error {
	status := deploymentStatus(dep, obs, time.Now())
	if equality.Semantic.DeepEqual(status, dep.Status) {
		return nil
	}
	updated := dep.DeepCopy()
	updated.Status = status
	if err := c.client.Status().Patch(ctx, updated, client.MergeFrom(dep)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile; the delete event stops the process
		}
		return fmt.Errorf("write status of Deployment %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	return nil
}
