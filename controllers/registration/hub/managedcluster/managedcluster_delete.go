package managedcluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// cleanupPollInterval is how often a deletion in progress is checked again.
const cleanupPollInterval = 2 * time.Second

// Cleanup of a deleted cluster: its ManifestWorks and add-ons, read from the
// API server, deleted, and their finalizers dropped when the agent is gone;
// its certificate requests and its namespace.
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;delete;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=list;delete;patch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=deletecollection
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;delete

// reconcileDelete removes what the deleted cluster left on the hub, one
// stage at a time, and reports the stage in the Deleting condition:
//
//  1. ManifestWorks and ManagedClusterAddOns in the cluster namespace, lowest
//     cleanup priority first (their agents remove their finalizers);
//  2. the cluster's RBAC and CertificateSigningRequests, then the namespace
//     with everything else in it, when it is the cluster's own
//     (pkg/clusternamespace); any other namespace of its name is left;
//  3. the finalizer, once the namespace is gone or left.
func (r *Reconciler) reconcileDelete(ctx context.Context, cluster *clusterv1.ManagedCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, clusterv1.ManagedClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cluster, r.Client)
	remaining, kept, err := r.cleanup(ctx, cluster)
	switch {
	case err != nil:
		setDeleting(cluster, metav1.ConditionFalse, clusterv1.ConditionDeletingReasonResourceError, err.Error())
	case remaining != "":
		setDeleting(cluster, metav1.ConditionFalse, clusterv1.ConditionDeletingReasonResourceRemaining, remaining)
	case kept != "":
		setDeleting(cluster, metav1.ConditionTrue, clusterv1.ConditionDeletingReasonNoResource,
			"The cluster's works, add-ons, permissions and certificate requests are removed; "+kept)
	default:
		setDeleting(cluster, metav1.ConditionTrue, clusterv1.ConditionDeletingReasonNoResource,
			"The cluster namespace, its content, the cluster's permissions and certificate requests are removed.")
	}
	if perr := h.Patch(ctx, cluster); perr != nil {
		return ctrl.Result{}, perr
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if remaining != "" {
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for cluster cleanup", "remaining", remaining)
		return ctrl.Result{RequeueAfter: cleanupPollInterval}, nil
	}
	h = patch.NewHelper(cluster, r.Client)
	controllerutil.RemoveFinalizer(cluster, clusterv1.ManagedClusterFinalizer)
	if err := h.Patch(ctx, cluster); err != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	return ctrl.Result{}, nil
}

// setDeleting sets the Deleting condition.
func setDeleting(cluster *clusterv1.ManagedCluster, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionDeleting, Status: status, Reason: reason,
		Message: message, ObservedGeneration: cluster.Generation,
	})
}

// cleanup advances the deletion by one stage. It returns a message naming
// what is left and why when the caller must wait, and "" when nothing is
// left; kept then says why the namespace of the cluster's name is left as
// it is, when it is not the cluster's own (pkg/clusternamespace): adopted
// for the cluster (a Cluster API namespace), someone else's or another
// cluster's. Only the works, add-ons and RoleBindings the cluster had in it
// are removed then.
func (r *Reconciler) cleanup(ctx context.Context, cluster *clusterv1.ManagedCluster) (remaining, kept string, err error) {
	ns := cluster.Name
	works := &workv1.ManifestWorkList{}
	if err := r.APIReader.List(ctx, works, client.InNamespace(ns)); err != nil && !meta.IsNoMatchError(err) {
		return "", "", fmt.Errorf("list ManifestWorks in %s: %w", ns, err)
	}
	addons := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.APIReader.List(ctx, addons, client.InNamespace(ns)); err != nil && !meta.IsNoMatchError(err) {
		return "", "", fmt.Errorf("list ManagedClusterAddOns in %s: %w", ns, err)
	}
	var objs []client.Object
	for i := range works.Items {
		objs = append(objs, &works.Items[i])
	}
	for i := range addons.Items {
		objs = append(objs, &addons.Items[i])
	}
	if len(objs) > 0 {
		remaining, err := r.deleteByPriority(ctx, cluster, objs, len(works.Items), len(addons.Items))
		return remaining, "", err
	}
	if err := r.deleteGrants(ctx, cluster.Name); err != nil {
		return "", "", err
	}
	namespace := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: ns}, namespace); err != nil {
		if isGone(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("get namespace %s: %w", ns, err)
	}
	switch clusternamespace.Of(namespace, cluster, FieldManager) {
	case clusternamespace.Owned:
	case clusternamespace.Adopted, clusternamespace.Prepared:
		return "", fmt.Sprintf("namespace %s, adopted for the cluster (annotation %s), is left as it is.", ns, clusternamespace.AdoptedAnnotation), nil
	default:
		return "", fmt.Sprintf("namespace %s, which the hub did not create for this cluster (it has no annotation %s=%s), is left as it is.",
			ns, clusternamespace.OwnerAnnotation, cluster.UID), nil
	}
	if namespace.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, namespace, client.Preconditions{UID: &namespace.UID}); client.IgnoreNotFound(err) != nil {
			return "", "", fmt.Errorf("delete namespace %s: %w", ns, err)
		}
	}
	return fmt.Sprintf("Waiting for namespace %s and the objects left in it to be deleted by the namespace controller.", ns), "", nil
}

// deleteByPriority deletes the objects of the lowest cleanup priority among
// objs and describes what is left. When the cluster is not available its agent
// cannot remove its finalizers from objects being deleted, so the hub removes
// them itself.
func (r *Reconciler) deleteByPriority(ctx context.Context, cluster *clusterv1.ManagedCluster, objs []client.Object, nWorks, nAddons int) (string, error) {
	lowest := slices.MinFunc(objs, func(a, b client.Object) int { return cleanupPriority(a) - cleanupPriority(b) })
	agentGone := cluster.AvailableStatus() != metav1.ConditionTrue
	var names []string
	for _, obj := range objs {
		names = append(names, obj.GetName())
		if cleanupPriority(obj) != cleanupPriority(lowest) {
			continue
		}
		if obj.GetDeletionTimestamp().IsZero() {
			if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return "", fmt.Errorf("delete %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
			}
			continue
		}
		if agentGone && len(obj.GetFinalizers()) > 0 {
			base := obj.DeepCopyObject().(client.Object)
			obj.SetFinalizers(nil)
			if err := r.Client.Patch(ctx, obj, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
				return "", fmt.Errorf("remove finalizers of %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
			}
		}
	}
	slices.Sort(names)
	why := "their agents remove their finalizers once the managed cluster has cleaned up"
	if agentGone {
		why = "the cluster is not available, so the hub removes their finalizers"
	}
	return fmt.Sprintf("Waiting for %d ManifestWorks and %d ManagedClusterAddOns in namespace %s to be deleted (%s): %s.",
		nWorks, nAddons, cluster.Name, why, strings.Join(names, ", ")), nil
}

// deleteGrants deletes the cluster's token identity (with its Role and
// RoleBinding), RoleBindings, ClusterRoleBinding, ClusterRole and
// CertificateSigningRequests: those labeled with the cluster's name, as the
// hub labels what it creates (deleteOwn), never an object of the same name
// someone else made.
func (r *Reconciler) deleteGrants(ctx context.Context, cluster string) error {
	if err := r.deleteTokenIdentity(ctx, cluster); err != nil {
		return err
	}
	objs := []client.Object{clusterRoleBinding(cluster, false), clusterRole(cluster)}
	for _, rb := range roleBindings(cluster, false) {
		objs = append([]client.Object{rb}, objs...)
	}
	for _, obj := range objs {
		if err := r.deleteOwn(ctx, cluster, obj); err != nil {
			return err
		}
	}
	err := r.Client.DeleteAllOf(ctx, &certificatesv1.CertificateSigningRequest{},
		client.MatchingLabels{clusterv1.ClusterNameLabelKey: cluster})
	if err != nil {
		return fmt.Errorf("delete CertificateSigningRequests of cluster %s: %w", cluster, err)
	}
	return nil
}

// cleanupPriority orders cleanup: objects without the cleanup-priority
// annotation first, then those with an invalid value, then values 0 to 100
// in increasing order.
func cleanupPriority(obj client.Object) int {
	v, ok := obj.GetAnnotations()[clusterv1.CleanupPriorityAnnotationKey]
	if !ok {
		return -2
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 100 {
		return -1
	}
	return n
}

// kindOf names the kind of obj for messages.
func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *workv1.ManifestWork:
		return "ManifestWork"
	case *addonv1alpha1.ManagedClusterAddOn:
		return "ManagedClusterAddOn"
	case *rbacv1.RoleBinding:
		return "RoleBinding"
	case *rbacv1.ClusterRoleBinding:
		return "ClusterRoleBinding"
	case *rbacv1.ClusterRole:
		return "ClusterRole"
	}
	return fmt.Sprintf("%T", obj)
}
