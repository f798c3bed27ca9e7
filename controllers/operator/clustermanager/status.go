package clustermanager

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// setTunnelConditions folds the hub tunnel's Deployment dep (nil when
// reading it failed with err) into the conditions setDeploymentConditions
// set from the hub controller's: the ClusterManager is Available only while
// the tunnel is too, and Progressing while the tunnel's rollout is under way.
// Registration and placement do not run in it, so their Degraded conditions
// do not follow it. A cause of the tunnel's is added to one the hub
// controller's condition already has.
func setTunnelConditions(cm *operatorv1.ClusterManager, dep *appsv1.Deployment, err error) {
	var st deploystatus.Status
	cause := fmt.Sprintf("read Deployment %s/%s: %v", config.HubNamespace, config.HubTunnelDeployment, err)
	if dep != nil {
		st = deploystatus.Of(dep)
		cause = fmt.Sprintf("Deployment %s/%s: %s", dep.Namespace, dep.Name, st)
		cm.Status.Generations = append(cm.Status.Generations, operatorv1.GenerationStatus{
			Group: appsv1.GroupName, Version: "v1", Resource: "deployments",
			Namespace: dep.Namespace, Name: dep.Name, LastGeneration: dep.Generation,
		})
	}
	if st.Done {
		return
	}
	fold := func(condition string, status bool, reason string) {
		if c := meta.FindStatusCondition(cm.Status.Conditions, condition); c != nil && (c.Status == metav1.ConditionTrue) == status {
			setCondition(cm, condition, status, c.Reason, c.Message+"; "+cause)
			return
		}
		setCondition(cm, condition, status, reason, cause)
	}
	fold(operatorv1.ConditionClusterManagerAvailable, false, operatorv1.ReasonHubTunnelUnavailable)
	if st.Stalled {
		if c := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionProgressing); c != nil && c.Status == metav1.ConditionTrue {
			return // the hub controller's rollout is under way
		}
		fold(operatorv1.ConditionProgressing, false, deploystatus.ReasonProgressDeadlineExceeded)
		return
	}
	fold(operatorv1.ConditionProgressing, true, operatorv1.ReasonClusterManagerDeploymentRolling)
}
