package clustermanager

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// deploymentState is what the operator reads from the hub controller
// Deployment: whether it is available at its current pod template, whether
// a rollout is under way, and the cause when it is not available.
type deploymentState struct {
	available   bool
	progressing bool
	cause       string
}

// readDeployment judges dep, which runs one process per replica.
func readDeployment(dep *appsv1.Deployment) deploymentState {
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	current := dep.Status.ObservedGeneration >= dep.Generation
	var availableCond, progressingCond *appsv1.DeploymentCondition
	var causes []string
	for i := range dep.Status.Conditions {
		c := &dep.Status.Conditions[i]
		switch c.Type {
		case appsv1.DeploymentAvailable:
			availableCond = c
		case appsv1.DeploymentProgressing:
			progressingCond = c
		}
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			causes = append(causes, fmt.Sprintf("%s: %s", c.Reason, c.Message))
		}
	}
	st := deploymentState{available: current && availableCond != nil && availableCond.Status == corev1.ConditionTrue &&
		dep.Status.UpdatedReplicas >= want && dep.Status.AvailableReplicas >= want}
	if st.available {
		return st
	}
	stalled := progressingCond != nil && progressingCond.Status == corev1.ConditionFalse
	st.progressing = !current || dep.Status.UpdatedReplicas < want || !stalled
	st.cause = fmt.Sprintf("Deployment %s/%s has %d/%d replicas available", dep.Namespace, dep.Name, dep.Status.AvailableReplicas, want)
	switch {
	case !current:
		st.cause += " (its new pod template is not rolled out yet)"
	case len(causes) > 0:
		st.cause += "; " + strings.Join(causes, "; ")
	}
	return st
}

// setDeploymentConditions sets Available, Progressing,
// HubRegistrationDegraded, HubPlacementDegraded and generations from the
// hub controller Deployment dep (nil when reading it failed with err): one
// process runs registration and placement, so both follow it.
func setDeploymentConditions(cm *operatorv1.ClusterManager, dep *appsv1.Deployment, err error) {
	var st deploymentState
	regReason, placeReason := operatorv1.ReasonUnavailableRegistrationPod, operatorv1.ReasonUnavailablePlacementPod
	if dep == nil {
		st.cause = fmt.Sprintf("read Deployment %s/%s: %v", config.HubNamespace, config.HubControllerDeployment, err)
		regReason, placeReason = operatorv1.ReasonGetRegistrationDeploymentFailed, operatorv1.ReasonGetPlacementDeploymentFailed
		cm.Status.Generations = nil
	} else {
		st = readDeployment(dep)
		cm.Status.Generations = []operatorv1.GenerationStatus{{
			Group: appsv1.GroupName, Version: "v1", Resource: "deployments",
			Namespace: dep.Namespace, Name: dep.Name, LastGeneration: dep.Generation,
		}}
	}
	if st.available {
		msg := fmt.Sprintf("Deployment %s/%s is available.", config.HubNamespace, config.HubControllerDeployment)
		setCondition(cm, operatorv1.ConditionClusterManagerAvailable, true, operatorv1.ReasonHubControllerAvailable, msg)
		setCondition(cm, operatorv1.ConditionHubRegistrationDegraded, false, operatorv1.ReasonRegistrationFunctional, msg)
		setCondition(cm, operatorv1.ConditionHubPlacementDegraded, false, operatorv1.ReasonPlacementFunctional, msg)
	} else {
		setCondition(cm, operatorv1.ConditionClusterManagerAvailable, false, operatorv1.ReasonHubControllerUnavailable, st.cause)
		setCondition(cm, operatorv1.ConditionHubRegistrationDegraded, true, regReason, st.cause)
		setCondition(cm, operatorv1.ConditionHubPlacementDegraded, true, placeReason, st.cause)
	}
	if st.progressing {
		setCondition(cm, operatorv1.ConditionProgressing, true, operatorv1.ReasonDeploymentRolling, st.cause)
	} else {
		setCondition(cm, operatorv1.ConditionProgressing, false, operatorv1.ReasonUpToDate, "No rollout is under way.")
	}
}
