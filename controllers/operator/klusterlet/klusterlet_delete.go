package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// reconcileDelete unjoins a deleted Klusterlet as `kubectl ocm unjoin` does:
// it revokes the agent's token identity on the hub (revokeHubToken), removes
// the agent (Deployment, RBAC, Secrets, namespace), waits until
// they are gone, removes the managed-cluster CRDs no object uses any more
// (AppliedManifestWorks and ClusterClaims keep theirs), then the finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, k *operatorv1.Klusterlet) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(k, Finalizer) {
		return ctrl.Result{}, nil
	}
	// Before the agent and its hub credential go.
	r.revokeHubToken(ctx, k)
	if k.Mode().IsHosted() {
		// Before the managed cluster's kubeconfig goes with the agent's namespace.
		r.deleteManagedAddonNamespace(ctx, k)
	}
	owned, err := r.owned(ctx, k.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	var crds []*unstructured.Unstructured
	var remaining []string
	var errs []error
	for _, obj := range owned {
		if obj.GetObjectKind().GroupVersionKind().Kind == "CustomResourceDefinition" {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(obj.GroupVersionKind())
			if err := r.Direct.Get(ctx, client.ObjectKeyFromObject(obj), u); err == nil {
				crds = append(crds, u)
			}
			continue
		}
		remaining = append(remaining, apply.Describe(obj))
		if !obj.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Direct.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", apply.Describe(obj), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for the agent's removal", "remaining", strings.Join(remaining, ", "))
		return ctrl.Result{RequeueAfter: recheckPeriod}, nil
	}
	unused, _, err := apply.UnusedCRDs(ctx, r.Direct, crds)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := apply.Delete(ctx, r.Direct, unused); err != nil {
		return ctrl.Result{}, err
	}
	h := patch.NewHelper(k, r.Client)
	k = k.DeepCopy()
	controllerutil.RemoveFinalizer(k, Finalizer)
	if err := h.Patch(ctx, k); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Removed the agent of the deleted Klusterlet", "klusterlet", k.Name)
	return ctrl.Result{}, nil
}
