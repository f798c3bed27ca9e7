package clustermanager

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// setDeploymentConditions sets Available, Progressing,
// HubRegistrationDegraded, HubPlacementDegraded and generations from the
// hub controller Deployment dep (nil when reading it failed with err), judged
// by deploystatus.Of: one process runs registration and placement, so
// both follow it. Progressing is True while a rollout is under way, and
// False once it is done or the deployment controller gave it up.
func setDeploymentConditions(cm *operatorv1.ClusterManager, dep *appsv1.Deployment, err error) {
	var st deploystatus.Status
	var cause string
	regReason, placeReason := operatorv1.ReasonUnavailableRegistrationPod, operatorv1.ReasonUnavailablePlacementPod
	if dep == nil {
		cause = fmt.Sprintf("read Deployment %s/%s: %v", config.HubNamespace, config.HubControllerDeployment, err)
		regReason, placeReason = operatorv1.ReasonGetRegistrationDeploymentFailed, operatorv1.ReasonGetPlacementDeploymentFailed
		cm.Status.Generations = nil
	} else {
		st = deploystatus.Of(dep)
		cause = fmt.Sprintf("Deployment %s/%s: %s", dep.Namespace, dep.Name, st)
		cm.Status.Generations = []operatorv1.GenerationStatus{{
			Group: appsv1.GroupName, Version: "v1", Resource: "deployments",
			Namespace: dep.Namespace, Name: dep.Name, LastGeneration: dep.Generation,
		}}
	}
	switch {
	case st.Done:
		msg := fmt.Sprintf("Deployment %s/%s is available.", config.HubNamespace, config.HubControllerDeployment)
		setCondition(cm, operatorv1.ConditionClusterManagerAvailable, true, operatorv1.ReasonHubControllerAvailable, msg)
		setCondition(cm, operatorv1.ConditionHubRegistrationDegraded, false, operatorv1.ReasonRegistrationFunctional, msg)
		setCondition(cm, operatorv1.ConditionHubPlacementDegraded, false, operatorv1.ReasonPlacementFunctional, msg)
		setCondition(cm, operatorv1.ConditionProgressing, false, operatorv1.ReasonClusterManagerUpToDate, "No rollout is under way.")
		return
	case st.Stalled:
		setCondition(cm, operatorv1.ConditionProgressing, false, deploystatus.ReasonProgressDeadlineExceeded, cause)
	default:
		setCondition(cm, operatorv1.ConditionProgressing, true, operatorv1.ReasonClusterManagerDeploymentRolling, cause)
	}
	setCondition(cm, operatorv1.ConditionClusterManagerAvailable, false, operatorv1.ReasonHubControllerUnavailable, cause)
	setCondition(cm, operatorv1.ConditionHubRegistrationDegraded, true, regReason, cause)
	setCondition(cm, operatorv1.ConditionHubPlacementDegraded, true, placeReason, cause)
}
