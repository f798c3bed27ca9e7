package clusterset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// SetReconciler ensures the built-in sets and reports set membership.
type SetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on ManagedClusterSets.
	Recorder events.EventRecorder
	// NoBuiltInSets leaves the sets default and global alone: neither
	// created nor restored (feature gate DefaultClusterSet off).
	NoBuiltInSets bool
}

// The built-in sets are created and restored; each set's status counts its
// clusters.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch

// SetupWithManager registers the reconciler. It is triggered once for each
// built-in set at start, for every set when a ManagedCluster is created or
// deleted or its labels change (membership depends on nothing else: a
// status write, the most frequent change of a fleet, recounts nothing), and
// for a set when it changes.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	start := make(chan event.GenericEvent, 2)
	for _, name := range []string{clusterv1beta2.DefaultClusterSetName, clusterv1beta2.GlobalClusterSetName} {
		start <- event.GenericEvent{Object: &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterset").
		For(&clusterv1beta2.ManagedClusterSet{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.allSets), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WatchesRawSource(source.Channel(start, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// allSets enqueues every set, built-in ones included.
func (r *SetReconciler) allSets(ctx context.Context, _ client.Object) []reconcile.Request {
	out := []reconcile.Request{
		{NamespacedName: client.ObjectKey{Name: clusterv1beta2.DefaultClusterSetName}},
		{NamespacedName: client.ObjectKey{Name: clusterv1beta2.GlobalClusterSetName}},
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSets")
		return out
	}
	for i := range sets.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sets.Items[i])})
	}
	return out
}

// Reconcile creates or restores a built-in set and updates the
// ClusterSetEmpty condition of any set.
func (r *SetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	err := r.Client.Get(ctx, req.NamespacedName, set)
	desired, builtIn := DesiredSpec(req.Name)
	builtIn = builtIn && !r.NoBuiltInSets
	switch {
	case apierrors.IsNotFound(err) && builtIn:
		set = &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: req.Name}, Spec: desired}
		if err := r.Client.Create(ctx, set); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create ManagedClusterSet %s: %w", req.Name, err)
		}
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, client.IgnoreNotFound(err)
	case !set.DeletionTimestamp.IsZero():
		return ctrl.Result{}, nil
	}
	// Only the selector of a built-in set is the hub's: its managed
	// namespaces are the administrator's, as in OCM.
	if builtIn && set.Annotations[clusterv1beta2.AutoUpdateAnnotation] != "false" && !equality.Semantic.DeepEqual(set.Spec.ClusterSelector, desired.ClusterSelector) {
		h := patch.NewHelper(set, r.Client)
		set.Spec.ClusterSelector = desired.ClusterSelector
		if err := h.Patch(ctx, set); err != nil {
			return patch.RetryStale(ctx, err, apierrors.IsNotFound)
		}
		r.Recorder.Eventf(set, nil, corev1.EventTypeNormal, rollbackEvent(set.Name), "Rollback", "spec of ManagedClusterSet %s rolled back", set.Name)
	}
	return patch.RetryStale(ctx, r.updateStatus(ctx, set), apierrors.IsNotFound)
}

// updateStatus sets the ClusterSetEmpty condition. A selector that cannot be
// evaluated selects nothing and is reported by the condition and a Warning
// event; it is the user's to fix, so it is not retried.
func (r *SetReconciler) updateStatus(ctx context.Context, set *clusterv1beta2.ManagedClusterSet) error {
	h := patch.NewHelper(set, r.Client)
	sel, err := set.Spec.ClusterSelector.Selector(set.Name)
	if err != nil {
		prev := meta.FindStatusCondition(set.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		cond := InvalidSelectorCondition(err, set.Generation)
		if prev == nil || prev.Reason != cond.Reason || prev.Message != cond.Message {
			r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, cond.Reason, "Select", "%s", cond.Message)
		}
		meta.SetStatusCondition(&set.Status.Conditions, cond)
		return h.Patch(ctx, set)
	}
	// Counting reads only the labels: the cache's objects are not copied
	// (thousands of clusters per recount).
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list ManagedClusters: %w", err)
	}
	meta.SetStatusCondition(&set.Status.Conditions, EmptyCondition(CountMembers(sel, clusters.Items), set.Generation))
	return h.Patch(ctx, set)
}

// rollbackEvent is OCM's event reason for a rolled back built-in set.
func rollbackEvent(name string) string {
	if name == clusterv1beta2.GlobalClusterSetName {
		return "GlobalManagedClusterSetSpecRollbacked"
	}
	return "DefaultManagedClusterSetSpecRollbacked"
}
