package agent

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// errNotConnected is returned by the hub watch while the agent has no hub
// connection; the informer retries.
var errNotConnected = errors.New("not connected to the hub")

// clusterWatch is the hub watch of one identity's ManagedCluster.
type clusterWatch struct {
	id       identity
	informer toolscache.SharedIndexInformer
}

// watchCluster watches the cluster's own ManagedCluster on the hub, through
// the current hub connection, until ctx ends (the agent's cluster role lets
// it list and watch that one object). It asks for a status sync when it first
// sees the cluster, and for a status sync and a lease renewal at once when the
// hub accepts the cluster or its spec changes (a new generation, such as a new
// spec.leaseDurationSeconds), and for a status sync alone when its managed
// namespaces change: an agent waiting for acceptance joins the moment
// the hub accepts it, and renews on a new lease duration from then on. The
// status sync and the lease renewal read the cluster from this watch
// (readCluster), so an idle agent's only requests to the hub are its lease
// renewals.
func (a *Agent) watchCluster(ctx context.Context, id identity) {
	lw := a.hubListWatch(func() client.ObjectList { return &clusterv1.ManagedClusterList{} }, "", id.cluster)
	inf := toolscache.NewSharedIndexInformer(lw, &clusterv1.ManagedCluster{}, 0, toolscache.Indexers{})
	// Right after the first join the hub may not have granted the new
	// identity its role yet; the informer retries, and the status sync
	// polls meanwhile: not an error worth logging.
	err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) || errors.Is(err, errNotConnected) {
			ctrl.LoggerFrom(ctx).V(1).Info("Cannot watch the ManagedCluster on the hub yet", "error", err.Error())
			return
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot set the ManagedCluster watch's error handler")
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { a.trigger() },
		UpdateFunc: func(old, obj any) {
			before, ok1 := old.(*clusterv1.ManagedCluster)
			after, ok2 := obj.(*clusterv1.ManagedCluster)
			switch {
			case ok1 && ok2 && needsAction(before, after):
				a.trigger()
				a.wakeLease()
			case ok1 && ok2 && namespacesChanged(before, after):
				a.trigger()
			}
		},
	})
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot watch the ManagedCluster on the hub")
		return
	}
	w := &clusterWatch{id: id, informer: inf}
	a.mu.Lock()
	a.watch = w
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if a.watch == w {
			a.watch = nil
		}
		a.mu.Unlock()
	}()
	inf.RunWithContext(ctx)
}

// hubListWatch lists and watches the objects named name (in namespace,
// "" for cluster-scoped ones) on the hub through the agent's current hub
// connection, so that an informer follows the agent across reconnections
// (a rotated credential, a change of the hub's CAs); newList returns an
// empty list of their kind.
func (a *Agent) hubListWatch(newList func() client.ObjectList, namespace, name string) *toolscache.ListWatch {
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			conn, _ := a.current()
			if conn == nil {
				return nil, errNotConnected
			}
			opts.FieldSelector = byName
			list := newList()
			err := conn.watcher.List(ctx, list, &client.ListOptions{Namespace: namespace, Raw: &opts})
			conn.noteError(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			conn, _ := a.current()
			if conn == nil {
				return nil, errNotConnected
			}
			opts.FieldSelector = byName
			return conn.watcher.Watch(ctx, newList(), &client.ListOptions{Namespace: namespace, Raw: &opts})
		},
	}
}

// readCluster returns the ManagedCluster of id: a copy of what the hub watch
// last delivered, or, while the watch has not synced or does not hold it
// (right after the join, before the hub grants the agent its role; after the
// cluster was deleted), what a read from the hub returns.
func (a *Agent) readCluster(ctx context.Context, conn *hubConnection, id identity) (*clusterv1.ManagedCluster, error) {
	if mc := a.cachedCluster(id); mc != nil {
		return mc, nil
	}
	mc := &clusterv1.ManagedCluster{}
	err := conn.client.Get(ctx, types.NamespacedName{Name: id.cluster}, mc)
	conn.noteError(err)
	return mc, err
}

// cachedCluster returns a copy of the ManagedCluster of id as the hub watch
// last delivered it, nil while the watch has not synced or does not hold it.
func (a *Agent) cachedCluster(id identity) *clusterv1.ManagedCluster {
	a.mu.Lock()
	w := a.watch
	a.mu.Unlock()
	if w == nil || w.id != id || !w.informer.HasSynced() {
		return nil
	}
	obj, exists, err := w.informer.GetStore().GetByKey(id.cluster)
	if mc, ok := obj.(*clusterv1.ManagedCluster); err == nil && exists && ok {
		return mc.DeepCopy()
	}
	return nil
}

// needsAction reports whether a change of the ManagedCluster from before to
// after asks the agent to act at once: the hub accepted it (or stopped), or
// its spec changed.
func needsAction(before, after *clusterv1.ManagedCluster) bool {
	return before.Generation != after.Generation || accepted(before) != accepted(after)
}

// namespacesChanged reports whether the managed namespaces of the
// ManagedCluster changed from before to after: the hub's list, or the
// conditions the agent reports there, which another write may have undone.
func namespacesChanged(before, after *clusterv1.ManagedCluster) bool {
	return !equality.Semantic.DeepEqual(before.Status.ManagedNamespaces, after.Status.ManagedNamespaces)
}

// accepted reports whether the hub reports the cluster accepted.
func accepted(mc *clusterv1.ManagedCluster) bool {
	return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
}

// wakeLease asks the lease loop to renew now, without blocking.
func (a *Agent) wakeLease() {
	select {
	case a.leaseWake <- struct{}{}:
	default:
	}
}
