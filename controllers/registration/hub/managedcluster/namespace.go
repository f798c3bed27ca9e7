package managedcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
)

// How often the hub looks again at a namespace in the way of a cluster.
const (
	// conflictRecheck: a namespace that is not the cluster's own. The
	// cache holds only namespaces labeled with a cluster name, so the hub
	// sees no event when an administrator deletes or marks an unlabeled
	// one. Only clusters an administrator or the auto-approval accepted
	// are looked at again, with one read each.
	conflictRecheck = 10 * time.Second
	// terminatingRecheck: a namespace being deleted, such as the namespace
	// of an earlier cluster of the same name.
	terminatingRecheck = 5 * time.Second
)

// eventNamespaceInUse is the reason of the event that says a cluster's
// namespace is not its own.
const eventNamespaceInUse = clusterv1.ReasonNamespaceInUse

// ensureNamespace returns the namespace of cluster and its standing
// (pkg/clusternamespace), creating it, marked with the cluster's UID, when
// there is none, and marking it when an earlier release of the hub created
// it unmarked. why is set when the namespace is not the cluster's to use: a
// namespace of someone else or of another cluster of the same name
// (clusternamespace.Conflict), or one being deleted.
func (r *Reconciler) ensureNamespace(ctx context.Context, cluster *clusterv1.ManagedCluster) (ns *corev1.Namespace, standing clusternamespace.Standing, why string, err error) {
	ns, err = r.readNamespace(ctx, cluster.Name)
	if err != nil {
		return nil, 0, "", err
	}
	if ns == nil {
		// Created, never applied over a namespace that appeared since it
		// was read: that one is someone else's.
		ns = clusternamespace.New(cluster.Name, cluster.UID)
		if err := r.Client.Create(ctx, ns); err != nil {
			return nil, 0, "", fmt.Errorf("create namespace %s: %w", cluster.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Created the cluster namespace", "cluster", klog.KObj(cluster))
		return ns, clusternamespace.Owned, "", nil
	}
	if !ns.DeletionTimestamp.IsZero() {
		return ns, 0, fmt.Sprintf("Waiting for namespace %s, which is being deleted, to be gone; the hub then creates this cluster's namespace.", ns.Name), nil
	}
	standing = clusternamespace.Of(ns, cluster, FieldManager)
	switch {
	case standing == clusternamespace.Foreign:
		return ns, standing, clusternamespace.Conflict(ns, cluster), nil
	case standing == clusternamespace.Prepared ||
		(standing == clusternamespace.Adopted && ns.Labels[clusterv1.ClusterNameLabelKey] != cluster.Name):
		// Prepared ahead for the cluster of this name: adopted for this
		// one. An adopted namespace gets the label the cache selects.
		p := clusternamespace.AdoptionPatch(cluster)
		if err := r.Client.Patch(ctx, ns.DeepCopy(), client.RawPatch(types.MergePatchType, p), client.FieldOwner(FieldManager)); err != nil {
			return nil, 0, "", fmt.Errorf("adopt namespace %s for cluster %s: %w", ns.Name, cluster.Name, err)
		}
		return ns, clusternamespace.Adopted, "", nil
	case standing == clusternamespace.Owned && ns.Annotations[clusternamespace.OwnerAnnotation] == "":
		// Created by an earlier release: marked now, so that the mark alone
		// tells from then on.
		p := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, clusternamespace.OwnerAnnotation, cluster.UID)
		if err := r.Client.Patch(ctx, ns.DeepCopy(), client.RawPatch(types.MergePatchType, p), client.FieldOwner(FieldManager)); err != nil {
			return nil, 0, "", fmt.Errorf("mark namespace %s as the namespace of cluster %s: %w", ns.Name, cluster.Name, err)
		}
	}
	return ns, standing, "", nil
}

// readNamespace reads namespace name: from the cache, which holds the
// namespaces labeled with a cluster name, else from the API server, so that
// a namespace of that name without the label is found too. It returns nil
// when there is none.
func (r *Reconciler) readNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read namespace %s: %w", name, err)
	}
	return ns, nil
}

// namespaceInUse stops the acceptance of cluster, whose namespace ns is
// not its to use (why): the hub writes nothing into ns and takes out of it
// the RoleBindings it made there for the cluster (by an earlier release,
// which bound the agent in any namespace of the cluster's name) and
// unbinds its certificate requests; the cluster's identity keeps what every
// agent may, reading ManagedClusters, so that its agent sees the condition.
// HubAcceptedManagedCluster turns False with
// reason NamespaceInUse and, for a conflict, a warning event says why.
func (r *Reconciler) namespaceInUse(ctx context.Context, cluster *clusterv1.ManagedCluster, ns *corev1.Namespace, why string) (time.Duration, error) {
	name := cluster.Name
	for _, rb := range roleBindings(name, false) {
		if rb.Namespace != name {
			continue
		}
		if err := r.deleteOwn(ctx, name, rb); err != nil {
			return 0, err
		}
	}
	if err := r.deleteCSRGrants(ctx, name); err != nil {
		return 0, err
	}
	recheck := conflictRecheck
	if !ns.DeletionTimestamp.IsZero() {
		recheck = terminatingRecheck
	}
	old := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	if old == nil || old.Reason != clusterv1.ReasonNamespaceInUse || old.Message != why {
		ctrl.LoggerFrom(ctx).Info("The namespace of the cluster's name is not the cluster's", "cluster", klog.KObj(cluster), "why", why)
		if ns.DeletionTimestamp.IsZero() {
			r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, eventNamespaceInUse, "Accept", "%s", why)
		}
	}
	setAccepted(cluster, metav1.ConditionFalse, clusterv1.ReasonNamespaceInUse, why)
	return recheck, nil
}

// deleteOwn deletes obj, named by its namespace and name, when the cache
// shows it labeled with cluster's name, as the hub labels what it creates
// for a cluster, with a precondition on the UID it read: an object of that
// name that someone else made is left alone.
func (r *Reconciler) deleteOwn(ctx context.Context, cluster string, obj client.Object) error {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if obj.GetLabels()[clusterv1.ClusterNameLabelKey] != cluster || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := obj.GetUID()
	if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
