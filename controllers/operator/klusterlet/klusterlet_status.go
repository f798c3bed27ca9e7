package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// setCondition sets cond on k, observed at k's generation.
func setCondition(k *operatorv1.Klusterlet, cond metav1.Condition) {
	cond.ObservedGeneration = k.Generation
	meta.SetStatusCondition(&k.Status.Conditions, cond)
}

// setApplied sets the Applied condition: True naming how many objects were
// applied and the unknown feature gates, or False with err's cause; a
// *config.FieldError names the field and its fix.
func setApplied(k *operatorv1.Klusterlet, err error, unknown []string, applied int) {
	cond := metav1.Condition{Type: operatorv1.ConditionKlusterletApplied, Status: metav1.ConditionTrue, Reason: operatorv1.ReasonKlusterletApplied,
		Message: fmt.Sprintf("Applied the %d objects of the agent", applied)}
	var fieldErr *config.FieldError
	switch {
	case errors.As(err, &fieldErr):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, fieldErr.Reason, "Cannot honor "+fieldErr.Error()
	case err != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, operatorv1.ReasonKlusterletApplyFailed, err.Error()
	}
	if len(unknown) > 0 {
		cond.Message += fmt.Sprintf("; ignored the unknown feature gates %s", strings.Join(unknown, ", "))
	}
	setCondition(k, cond)
}

// setDeploymentStatus sets Available, Progressing,
// RegistrationDesiredDegraded, WorkDesiredDegraded and generations from the
// agent Deployment namespace/name, which runs both registration and work,
// judged by deploystatus.Of. Progressing is True while a rollout is under
// way, and False once it is done or the deployment controller gave it up.
func (r *Reconciler) setDeploymentStatus(ctx context.Context, k *operatorv1.Klusterlet, namespace, name string) error {
	dep := &appsv1.Deployment{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, dep)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read the agent Deployment %s/%s: %w", namespace, name, err)
	}
	reason, message := operatorv1.ReasonKlusterletGetDeploymentFailed, fmt.Sprintf("Deployment %s/%s does not exist yet", namespace, name)
	var st deploystatus.Status
	if err == nil {
		k.Status.Generations = []operatorv1.GenerationStatus{{Group: "apps", Version: "v1", Resource: "deployments",
			Namespace: namespace, Name: name, LastGeneration: dep.Generation}}
		st = deploystatus.Of(dep)
		reason, message = operatorv1.ReasonKlusterletNoAvailablePods, fmt.Sprintf("Deployment %s/%s: %s", namespace, name, st)
	}
	switch {
	case st.Done:
		msg := fmt.Sprintf("Deployment %s/%s is available", namespace, name)
		setCondition(k, metav1.Condition{Type: operatorv1.ConditionKlusterletAvailable, Status: metav1.ConditionTrue, Reason: operatorv1.ReasonKlusterletAvailable, Message: msg})
		setCondition(k, metav1.Condition{Type: operatorv1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: operatorv1.ReasonKlusterletUpToDate, Message: msg})
		for _, t := range []string{operatorv1.ConditionRegistrationDesiredDegraded, operatorv1.ConditionWorkDesiredDegraded} {
			setCondition(k, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: operatorv1.ReasonKlusterletDeploymentsFunctional, Message: msg})
		}
		return nil
	case st.Stalled:
		setCondition(k, metav1.Condition{Type: operatorv1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: deploystatus.ReasonProgressDeadlineExceeded, Message: message})
	default:
		setCondition(k, metav1.Condition{Type: operatorv1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: operatorv1.ReasonKlusterletDeploymentRolling, Message: message})
	}
	setCondition(k, metav1.Condition{Type: operatorv1.ConditionKlusterletAvailable, Status: metav1.ConditionFalse, Reason: reason, Message: message})
	for _, t := range []string{operatorv1.ConditionRegistrationDesiredDegraded, operatorv1.ConditionWorkDesiredDegraded} {
		setCondition(k, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: operatorv1.ReasonKlusterletUnavailablePods, Message: message})
	}
	return nil
}
