package managedcluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// FieldManager owns the fields the hub controller applies.
const FieldManager = clusternamespace.HubFieldManager

// Workers is how many ManagedClusters are reconciled at once: accepting one
// applies its namespace and RBAC one write after another, so a single worker
// bounded how fast thousands of clusters could join (its queue held 185
// clusters while 5,000 joined). The workqueue never hands one cluster to two
// workers.
const Workers = 4

// Reasons of the events this reconciler records.
const (
	eventAccepted = "ManagedClusterAccepted"
	eventDenied   = "ManagedClusterDenied"
	// eventTokenIdentityMoved says that the hub deleted the token identity
	// a cluster's agent held in the cluster namespace
	// (identity.LegacyAgentServiceAccount).
	eventTokenIdentityMoved = "AgentTokenIdentityMoved"
)

// Reconciler accepts, denies and cleans up ManagedClusters.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads uncached objects: the ManifestWorks, add-ons and
	// CertificateSigningRequests of a cluster being deleted.
	APIReader client.Reader
	// Recorder records events on ManagedClusters.
	Recorder events.EventRecorder
}

// ManagedClusters: finalizer and status patches. The cluster namespace and
// per-cluster RBAC: watched, server-side applied, RoleBindings deleted on
// deny. Accepting lists the cluster's certificate requests.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings;roles;rolebindings,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=list;watch

// SetupWithManager registers the reconciler. Besides ManagedClusters it
// watches the namespace and RBAC objects it creates (labeled with the
// cluster name), so that it restores them when someone deletes or edits them,
// and the token identities (ServiceAccounts labeled with the cluster name),
// whose creation and deletion add and remove them as subjects.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := csr.IndexByCluster(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if name := obj.GetLabels()[clusterv1.ClusterNameLabelKey]; name != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster").
		For(&clusterv1.ManagedCluster{}).
		Watches(&corev1.Namespace{}, byLabel).
		Watches(&rbacv1.ClusterRole{}, byLabel).
		Watches(&rbacv1.ClusterRoleBinding{}, byLabel).
		Watches(&rbacv1.RoleBinding{}, byLabel).
		Watches(&rbacv1.Role{}, byLabel).
		Watches(&corev1.ServiceAccount{}, byLabel).
		// A cluster's own certificate requests are named in its ClusterRole.
		Watches(&certificatesv1.CertificateSigningRequest{}, byLabel).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
}

// Reconcile brings the hub's grants for one ManagedCluster in line with
// spec.hubAcceptsClient, or cleans up after a deleted cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cluster)
	}
	if _, err := patch.EnsureFinalizer(ctx, r.Client, cluster, clusterv1.ManagedClusterFinalizer); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	h := patch.NewHelper(cluster, r.Client)
	wasAccepted := cluster.IsAccepted()
	var err error
	var recheck time.Duration
	if cluster.Spec.HubAcceptsClient {
		recheck, err = r.accept(ctx, cluster)
	} else {
		err = r.deny(ctx, cluster)
	}
	if perr := h.Patch(ctx, cluster); perr != nil {
		return patch.RetryStale(ctx, perr, apierrors.IsNotFound)
	}
	r.recordTransition(ctx, h, wasAccepted, cluster)
	return ctrl.Result{RequeueAfter: recheck}, err
}

// accept creates the cluster namespace and grants the accepted cluster's
// agent its permissions, then sets HubAcceptedManagedCluster True. The
// grants name the cluster's token identity only once the token driver's
// controller created it (agenttoken), and that identity gets its own Role in
// identity.AgentTokenNamespace. A namespace of the cluster's name that is
// not the cluster's own stops it (namespaceInUse), and recheck says when to
// look again.
func (r *Reconciler) accept(ctx context.Context, cluster *clusterv1.ManagedCluster) (recheck time.Duration, err error) {
	name := cluster.Name
	csrs := &certificatesv1.CertificateSigningRequestList{}
	if err := r.Client.List(ctx, csrs, csr.OfCluster(name)); err != nil {
		return 0, fmt.Errorf("list CertificateSigningRequests of cluster %s: %w", name, err)
	}
	sa, err := r.tokenIdentity(ctx, name)
	if err != nil {
		return 0, err
	}
	ns, standing, why, err := r.ensureNamespace(ctx, cluster)
	if err != nil {
		setAccepted(cluster, metav1.ConditionFalse, clusterv1.ReasonHubAcceptError, fmt.Sprintf("Failed to set up the cluster namespace: %v", err))
		return 0, err
	}
	if why != "" {
		return r.namespaceInUse(ctx, cluster, ns, why)
	}
	var objs []client.Object
	if standing == clusternamespace.Owned {
		// Its labels are restored when someone edits them; an adopted
		// namespace keeps its own.
		objs = append(objs, clusternamespace.New(name, cluster.UID))
	}
	for _, rb := range roleBindings(name, sa != nil) {
		objs = append(objs, rb)
	}
	if sa != nil {
		role, binding := tokenGrants(name, sa)
		objs = append(objs, role, binding)
	}
	if err := r.apply(ctx, objs...); err != nil {
		setAccepted(cluster, metav1.ConditionFalse, clusterv1.ReasonHubAcceptError, fmt.Sprintf("Failed to set up the cluster namespace and permissions: %v", err))
		return 0, err
	}
	if err := r.csrGrants(ctx, name, sa != nil, ownCSRNames(name, csrs.Items)); err != nil {
		setAccepted(cluster, metav1.ConditionFalse, clusterv1.ReasonHubAcceptError, fmt.Sprintf("Failed to set up the cluster's permissions: %v", err))
		return 0, err
	}
	if err := r.deleteLegacyTokenIdentity(ctx, cluster); err != nil {
		return 0, err
	}
	setAccepted(cluster, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted, "Accepted by hub cluster admin")
	return 0, nil
}

// recordTransition records that cluster was accepted or denied, once: when
// the status patch that Reconcile just sent with h turned
// HubAcceptedManagedCluster True, or from True to denied. A reconcile whose
// cache did not show the controller's own earlier write yet sets the
// condition again, but its patch finds the change made and sends nothing,
// so the transition is not recorded twice (every repeat of an event is
// another write, and the events recorder writes a series again when it
// ends).
func (r *Reconciler) recordTransition(ctx context.Context, h *patch.Helper, wasAccepted bool, cluster *clusterv1.ManagedCluster) {
	if !h.SentStatus() || cluster.IsAccepted() == wasAccepted {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	switch c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); {
	case cluster.IsAccepted():
		log.V(2).Info("Accepted managed cluster", "cluster", klog.KObj(cluster))
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, eventAccepted, "Accept", "managed cluster %s is accepted by hub cluster admin", cluster.Name)
	case c != nil && c.Reason == clusterv1.ReasonHubClusterAdminDenied:
		log.V(2).Info("Denied managed cluster", "cluster", klog.KObj(cluster))
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, eventDenied, "Deny", "managed cluster %s is denied by hub cluster admin", cluster.Name)
	}
}

// tokenIdentity returns the ServiceAccount of the token identity of
// cluster's agent, as the cache holds it, or nil when the cluster has none
// (it registered with certificates) or it is being deleted.
func (r *Reconciler) tokenIdentity(ctx context.Context, cluster string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(cluster)}, sa)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the token identity of cluster %s: %w", cluster, err)
	case !sa.DeletionTimestamp.IsZero() || sa.Labels[clusterv1.ClusterNameLabelKey] != cluster:
		return nil, nil
	}
	return sa, nil
}

// deleteLegacyTokenIdentity deletes the ServiceAccount that held the token
// identity of cluster's agent in the cluster namespace before it moved to
// identity.AgentTokenNamespace (the hub created it labeled with the cluster
// name, which the cache selects). No grant names it any more; deleting it
// makes its tokens fail authentication (401), so the agent registers again
// instead of holding a token that is refused everything. Registering again
// takes an administrator's approval (`kubectl ocm accept --clusters <cluster>
// --rejoin`), which the event says.
func (r *Reconciler) deleteLegacyTokenIdentity(ctx context.Context, cluster *clusterv1.ManagedCluster) error {
	sa := &corev1.ServiceAccount{}
	key := client.ObjectKey{Namespace: cluster.Name, Name: identity.LegacyAgentServiceAccount}
	if err := r.Client.Get(ctx, key, sa); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !sa.DeletionTimestamp.IsZero() || sa.Labels[clusterv1.ClusterNameLabelKey] != cluster.Name {
		return nil
	}
	if err := r.Client.Delete(ctx, sa, client.Preconditions{UID: &sa.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete ServiceAccount %s/%s: %w", key.Namespace, key.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted the token identity of the cluster namespace", "cluster", klog.KObj(cluster), "serviceAccount", key.String())
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, eventTokenIdentityMoved, "Revoke",
		"deleted ServiceAccount %s, which is no agent identity any more: the token identity of a cluster registered with the token driver is ServiceAccount %s/%s; the agent registers again, approve it with `kubectl ocm accept --clusters %s --rejoin`",
		key, identity.AgentTokenNamespace, identity.AgentTokenServiceAccount(cluster.Name), cluster.Name)
	return nil
}

// csrGrants binds the per-cluster ClusterRole, which lets cluster's agent
// read its own certificate requests ownCSRs, while it has some, and deletes
// the role and its binding when it has none (and the binding of every
// cluster of an earlier release, which granted the rest of the agent's
// cluster-scoped rights; the agents' shared ClusterRole grants them now).
// Only a role and binding labeled with the cluster's name are deleted.
func (r *Reconciler) csrGrants(ctx context.Context, cluster string, tokenDriver bool, ownCSRs []string) error {
	if len(ownCSRs) > 0 {
		return r.apply(ctx, clusterRole(cluster, ownCSRs...), clusterRoleBinding(cluster, tokenDriver))
	}
	return r.deleteCSRGrants(ctx, cluster)
}

// deleteCSRGrants deletes the per-cluster ClusterRoleBinding, then its
// ClusterRole, when the hub made them for cluster.
func (r *Reconciler) deleteCSRGrants(ctx context.Context, cluster string) error {
	for _, obj := range []client.Object{clusterRoleBinding(cluster, false), clusterRole(cluster)} {
		if err := r.deleteOwn(ctx, cluster, obj); err != nil {
			return err
		}
	}
	return nil
}

// TokenGranted reports whether reader (the hub controller's cache) shows
// every grant to cluster's agent naming its token identity: the RoleBindings
// in the cluster namespace and the token identity's own RoleBinding. (Its
// cluster-scoped rights come with its namespace's group, from the agents'
// shared ClusterRoleBinding; its certificate requests' from the per-cluster
// one, which names it when there are requests to read.) The token driver
// issues a token only then, so that the agent's first request with it is
// not refused.
func TokenGranted(ctx context.Context, reader client.Reader, cluster string) (bool, error) {
	subject := identity.AgentTokenSubject(cluster)
	keys := []client.ObjectKey{{Namespace: identity.AgentTokenNamespace, Name: TokenRoleName(cluster)}}
	for _, rb := range roleBindings(cluster, true) {
		keys = append(keys, client.ObjectKeyFromObject(rb))
	}
	for _, key := range keys {
		rb := &rbacv1.RoleBinding{}
		if err := reader.Get(ctx, key, rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if !slices.Contains(rb.Subjects, subject) {
			return false, nil
		}
	}
	return true, nil
}

// deny removes the cluster's grants and deletes the token driver's
// ServiceAccount, which revokes its tokens and takes its Role along. Its
// identity keeps what every agent holds, reading ManagedClusters; admission
// refuses its status writes while the cluster is not accepted. A cluster
// that was accepted before gets HubAcceptedManagedCluster False.
func (r *Reconciler) deny(ctx context.Context, cluster *clusterv1.ManagedCluster) error {
	name := cluster.Name
	// Revoke every token of the token driver's identity first; a cluster
	// accepted again gets a new one through a new request.
	if err := r.deleteTokenIdentity(ctx, name); err != nil {
		return err
	}
	if err := r.deleteLegacyTokenIdentity(ctx, cluster); err != nil {
		return err
	}
	if err := r.deleteCSRGrants(ctx, name); err != nil {
		return err
	}
	for _, rb := range roleBindings(name, false) {
		if err := r.deleteOwn(ctx, name, rb); err != nil {
			return err
		}
	}
	if meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) == nil {
		return nil
	}
	setAccepted(cluster, metav1.ConditionFalse, clusterv1.ReasonHubClusterAdminDenied, "Denied by hub cluster admin")
	return nil
}

// deleteTokenIdentity deletes the ServiceAccount of the token identity of
// cluster's agent, which revokes every token of it; its Role and RoleBinding
// go with it (owner references).
func (r *Reconciler) deleteTokenIdentity(ctx context.Context, cluster string) error {
	sa, err := r.tokenIdentity(ctx, cluster)
	if err != nil || sa == nil {
		return err
	}
	if err := r.Client.Delete(ctx, sa); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return nil
}

// setAccepted sets the HubAcceptedManagedCluster condition.
func setAccepted(cluster *clusterv1.ManagedCluster, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionHubAccepted, Status: status, Reason: reason,
		Message: message, ObservedGeneration: cluster.Generation,
	})
}

// apply server-side-applies objs as the hub controller, but those the cache
// shows as they would be after the apply: a restarted hub controller
// reconciles every cluster again, and five applies per cluster would be
// thousands of requests (throttled by the controller's client rate limit)
// that change nothing.
func (r *Reconciler) apply(ctx context.Context, objs ...client.Object) error {
	us := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		if apply.UpToDate(ctx, r.Client, obj) {
			continue
		}
		u, err := apply.ToUnstructured(obj, r.Client.Scheme())
		if err != nil {
			return err
		}
		us = append(us, u)
	}
	if len(us) == 0 {
		return nil
	}
	return apply.Apply(ctx, r.Client, us, apply.Options{FieldManager: FieldManager})
}

// isGone reports whether err says the object does not exist.
func isGone(err error) bool { return apierrors.IsNotFound(err) }
