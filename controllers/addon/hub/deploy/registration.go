package deploy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// msgRegistrationConfigured is OCM's message of RegistrationApplied True.
const msgRegistrationConfigured = "Registration of the addon agent is configured"

// reconcileRegistration writes status.registrations and the RoleBindings
// of the template's hub permissions, and sets RegistrationApplied. A
// failure is reported on the condition and in an Event; the deploy works
// are written regardless, as in OCM, where registration is its own
// controller.
func (r *Reconciler) reconcileRegistration(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, t *addonv1alpha1.AddOnTemplate) {
	mca.Status.Registrations = template.Registrations(mca.Namespace, mca.Name, mca.Status.KubeClientDriver, t)
	bindings, err := template.PermissionBindings(mca.Namespace, mca.Name, t)
	if err == nil {
		err = r.writeBindings(ctx, mca, bindings)
	}
	if err != nil {
		msg := fmt.Sprintf("Failed to set permission for hub agent: %v", err)
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionFalse, addonv1alpha1.RegistrationAppliedReasonSetPermissionFailed, msg)
		r.Recorder.Eventf(mca, t, corev1.EventTypeWarning, eventPermissionFailed, "Bind", "%s", msg)
		return
	}
	setCondition(mca, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionTrue, addonv1alpha1.RegistrationAppliedReasonSetPermissionApplied, msgRegistrationConfigured)
}

// writeBindings creates or updates the RoleBindings of the add-on's hub
// permissions and deletes those it no longer has. Those in the cluster's
// namespace are owned by mca, so that they go with it; those elsewhere
// cannot be (owners are namespaced) and are deleted by deleteBindings once
// mca is gone.
func (r *Reconciler) writeBindings(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, bindings []rbacv1.RoleBinding) error {
	keep := map[client.ObjectKey]bool{}
	var errs []error
	for i := range bindings {
		rb := &bindings[i]
		if rb.Namespace == mca.Namespace {
			if err := controllerutil.SetOwnerReference(mca, rb, r.Client.Scheme()); err != nil {
				return err
			}
		}
		keep[client.ObjectKeyFromObject(rb)] = true
		if err := r.writeBinding(ctx, rb); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.deleteBindings(ctx, mca.Namespace, mca.Name, keep); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeBinding creates rb or brings the existing RoleBinding in line with
// it; a RoleBinding whose roleRef differs (roleRef is immutable) is
// replaced.
func (r *Reconciler) writeBinding(ctx context.Context, rb *rbacv1.RoleBinding) error {
	current := &rbacv1.RoleBinding{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(rb), current)
	if apierrors.IsNotFound(err) {
		// The cache holds only labeled RoleBindings: look for an unlabeled one.
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(rb), current)
	}
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, rb); err != nil {
			return fmt.Errorf("create RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
	case current.RoleRef != rb.RoleRef:
		if err := r.Client.Delete(ctx, current, client.Preconditions{UID: &current.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replace RoleBinding %s/%s with roleRef %s %s: %w", rb.Namespace, rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name, err)
		}
		if err := r.Client.Create(ctx, rb); err != nil {
			return fmt.Errorf("create RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
		return nil
	}
	updated := current.DeepCopy()
	updated.Labels = labels.Merge(updated.Labels, rb.Labels)
	updated.Subjects = rb.Subjects
	for _, o := range rb.OwnerReferences {
		updated.OwnerReferences = upsertOwner(updated.OwnerReferences, o)
	}
	if err := patch.NewHelper(current, r.Client).Patch(ctx, updated); err != nil {
		return fmt.Errorf("update RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	return nil
}

// upsertOwner sets owner among refs, by UID.
func upsertOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	for i := range refs {
		if refs[i].UID == owner.UID {
			refs[i] = owner
			return refs
		}
	}
	return append(refs, owner)
}

// deleteBindings deletes the hub permission RoleBindings of addon on
// cluster, in every namespace, except those in keep. They are told from
// other RoleBindings of the add-on by the template label.
func (r *Reconciler) deleteBindings(ctx context.Context, cluster, addon string, keep map[client.ObjectKey]bool) error {
	list := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{addonv1alpha1.AddonLabelKey: addon, clusterv1.ClusterNameLabelKey: cluster},
		client.HasLabels{addonv1alpha1.AddonTemplateLabelKey}); err != nil {
		return fmt.Errorf("list the RoleBindings of add-on %s on cluster %s: %w", addon, cluster, err)
	}
	for i := range list.Items {
		rb := &list.Items[i]
		if keep[client.ObjectKeyFromObject(rb)] || !rb.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
	}
	return nil
}
