package token

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller and its field manager.
const ControllerName = "addon-token-infrastructure"

// Reconciler keeps the token infrastructure of one ManagedClusterAddOn.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads the ServiceAccount's UID right after it is written.
	APIReader client.Reader
}

// ManagedClusterAddOns: read, status patched, owners of the infrastructure
// (blockOwnerDeletion needs update on their finalizers). The
// ServiceAccounts, Roles and RoleBindings are written; a Role granting
// create on serviceaccounts/token can only be written by one who holds
// that permission, as OCM's add-on manager does.
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete

// SetupWithManager registers the reconciler with mgr, filling in the
// fields left empty from it. Besides ManagedClusterAddOns it watches the
// ServiceAccounts, Roles and RoleBindings it labeled, so that one changed
// or deleted by hand is written again.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	toAddon := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[addonv1alpha1.AddonNameLabelKey]}}}
	})
	labeled := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[addonv1alpha1.TokenInfrastructureLabelKey] == "true" && o.GetLabels()[addonv1alpha1.AddonNameLabelKey] != ""
	}))
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&addonv1alpha1.ManagedClusterAddOn{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			mca := o.(*addonv1alpha1.ManagedClusterAddOn)
			return registration.UsesToken(mca) || meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady) != nil
		}))).
		Watches(&corev1.ServiceAccount{}, toAddon, labeled).
		Watches(&rbacv1.Role{}, toAddon, labeled).
		Watches(&rbacv1.RoleBinding{}, toAddon, labeled).
		Complete(r)
}

// Reconcile writes or removes the token infrastructure of one add-on.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		// Gone: the owner references take the infrastructure with it.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(mca, r.Client)
	if !registration.UsesToken(mca) {
		if meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady) == nil {
			return ctrl.Result{}, nil
		}
		if err := r.remove(ctx, mca); err != nil {
			return ctrl.Result{}, err
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Removed the token infrastructure of an add-on that no longer uses the token driver")
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady)
		return ctrl.Result{}, h.Patch(ctx, mca)
	}
	uid, applyErr := r.write(ctx, mca)
	cond := metav1.Condition{
		Type: addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady, Status: metav1.ConditionTrue,
		Reason:             addonv1alpha1.TokenInfrastructureReasonReady,
		Message:            registration.ReadyMessage(mca.Namespace, identity.AddonServiceAccount(mca.Name), uid),
		ObservedGeneration: mca.Generation,
	}
	if applyErr != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, addonv1alpha1.TokenInfrastructureReasonApplyFailed
		cond.Message = fmt.Sprintf("Failed to apply token infrastructure: %v", applyErr)
	}
	meta.SetStatusCondition(&mca.Status.Conditions, cond)
	return ctrl.Result{}, errors.Join(applyErr, h.Patch(ctx, mca))
}

// write applies the ServiceAccount, Role and RoleBinding of mca and returns
// the ServiceAccount's UID.
func (r *Reconciler) write(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (string, error) {
	objs := Objects(mca.Namespace, mca.Name)
	for _, o := range objs {
		if err := ctrl.SetControllerReference(mca, o, r.Client.Scheme()); err != nil {
			return "", fmt.Errorf("own %T %s by the ManagedClusterAddOn: %w", o, o.GetName(), err)
		}
		u, err := apply.ToUnstructured(o, r.Client.Scheme())
		if err != nil {
			return "", err
		}
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(ControllerName), client.ForceOwnership); err != nil {
			return "", fmt.Errorf("apply %s: %w", apply.Describe(u), err)
		}
	}
	sa := &corev1.ServiceAccount{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(objs[0]), sa); err != nil {
		return "", fmt.Errorf("read ServiceAccount %s/%s: %w", objs[0].GetNamespace(), objs[0].GetName(), err)
	}
	return string(sa.UID), nil
}

// remove deletes the ServiceAccount, Role and RoleBinding of mca.
func (r *Reconciler) remove(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) error {
	var errs []error
	for _, o := range Objects(mca.Namespace, mca.Name) {
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
