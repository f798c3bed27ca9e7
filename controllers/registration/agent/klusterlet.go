package agent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// reportDegraded reports that the agent cannot connect to the hub yet.
func (a *Agent) reportDegraded(ctx context.Context, reason, message string) {
	a.setKlusterletConditions(ctx,
		metav1.Condition{Type: operatorv1.ConditionHubConnectionDegraded, Status: metav1.ConditionTrue, Reason: reason, Message: message})
}

// reportUnauthorized reports that the hub rejects the hub credential.
func (a *Agent) reportUnauthorized(ctx context.Context) {
	a.reportDegraded(ctx, operatorv1.ReasonHubKubeConfigUnauthorized, fmt.Sprintf(
		"The hub rejects the credential in Secret %s/%s; the agent requests a new certificate with the bootstrap kubeconfig",
		a.opts.Namespace, a.opts.HubKubeconfigSecret))
}

// reportJoined reports a working hub connection.
func (a *Agent) reportJoined(ctx context.Context, id identity, server string) {
	msg := fmt.Sprintf("Cluster %s joined hub %s as %s", id.cluster, server, id.subject().CommonName)
	if a.opts.multipleHubs() {
		a.mu.Lock()
		i := a.hubIndex
		a.mu.Unlock()
		msg += fmt.Sprintf(" (hub %d of %d, bootstrap Secret %s)", i+1, len(a.opts.BootstrapKubeconfigSecrets), a.opts.BootstrapKubeconfigSecrets[i])
	}
	a.setKlusterletConditions(ctx,
		metav1.Condition{Type: operatorv1.ConditionHubConnectionDegraded, Status: metav1.ConditionFalse, Reason: operatorv1.ReasonHubConnectionFunctional, Message: msg})
}

// The Klusterlet, from the cache, and its conditions. The agent writes only
// HubConnectionDegraded (it alone knows whether the hub accepts its
// credential); the Klusterlet operator writes the others, from what runs.
// +kubebuilder:rbac:groups=operator.open-cluster-management.io,resources=klusterlets,verbs=get;list;watch
// +kubebuilder:rbac:groups=operator.open-cluster-management.io,resources=klusterlets/status,verbs=patch

// setKlusterletConditions sets conds, of the agent's own types, on the Klusterlet's status with one
// patch, only when something changed. A missing Klusterlet is not an error:
// the agent can run without one.
func (a *Agent) setKlusterletConditions(ctx context.Context, conds ...metav1.Condition) {
	log := ctrl.LoggerFrom(ctx)
	k := &operatorv1.Klusterlet{}
	if err := a.mgmt.Get(ctx, types.NamespacedName{Name: a.opts.KlusterletName}, k); err != nil {
		if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			log.Error(err, "Cannot read the Klusterlet", "klusterlet", a.opts.KlusterletName)
		}
		return
	}
	h := patch.NewHelper(k, a.mgmt)
	desired := k.DeepCopy()
	for _, c := range conds {
		c.ObservedGeneration = k.Generation
		meta.SetStatusCondition(&desired.Status.Conditions, c)
	}
	if err := h.Patch(ctx, desired); err != nil {
		log.Error(err, "Cannot update the Klusterlet's conditions", "klusterlet", a.opts.KlusterletName)
		return
	}
	for _, c := range conds {
		if old := meta.FindStatusCondition(k.Status.Conditions, c.Type); old == nil || old.Status != c.Status || old.Reason != c.Reason {
			log.V(2).Info("Klusterlet condition changed", "type", c.Type, "status", c.Status, "reason", c.Reason, "message", c.Message)
		}
	}
}
