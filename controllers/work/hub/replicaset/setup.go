package replicaset

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// placementIndex indexes ManifestWorkReplicaSets by the placements they
// reference, as <namespace>/<placement>.
const placementIndex = "spec.placementRefs.name"

// ownerIndex indexes ManifestWorks by the ManifestWorkReplicaSet that owns
// them, as <namespace>/<name> (workv1alpha1.OwnerOf): a set's reconcile
// reads its own works without visiting every work of the hub, which at
// 10,000 clusters and a few sets was most of the hub controller's CPU.
const ownerIndex = "ownerManifestWorkReplicaSet"

// ownerKey is the ownerIndex value of obj, none when no set owns it.
func ownerKey(obj client.Object) []string {
	ns, name, ok := workv1alpha1.OwnerOf(obj)
	if !ok {
		return nil
	}
	return []string{client.ObjectKey{Namespace: ns, Name: name}.String()}
}

// The controller reads from the cache; it reads a ManifestWork from the API
// server when its create finds one there already.
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=list;watch;patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets/status,verbs=patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;delete
// The controller creates ManifestWorks with the executor of their
// ManifestWorkReplicaSet's template; admission checks execute-as for that
// executor against whoever writes the ManifestWorkReplicaSet
// (config/hub/35-work-admission.yaml).
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=execute-as
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Workers is how many ManifestWorkReplicaSets are reconciled at once. Each
// reconcile is independent of the others' (the workqueue never hands one
// ManifestWorkReplicaSet to two workers), and most of its time is spent
// waiting on the API server: with one worker, 100 concurrent Progressive
// rollouts moved one ManifestWorkReplicaSet at a time.
const Workers = 8

// SetupWithManager registers the ManifestWorkReplicaSet controller with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("ocm-hub-controller")}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers r with mgr: it watches ManifestWorkReplicaSets,
// the Placements and PlacementDecisions they reference, their labeled
// ManifestWorks, the labels of ManagedClusters (for overrides by label), the
// RolloutApprovals that open their gates and the creation of the
// ManifestChunks their templates list (metadata only, the informer the
// chunk collector, payloadgc, watches too).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &workv1alpha1.ManifestWorkReplicaSet{}, placementIndex, func(o client.Object) []string {
		mwrs := o.(*workv1alpha1.ManifestWorkReplicaSet)
		keys := make([]string, 0, len(mwrs.Spec.PlacementRefs))
		for _, ref := range mwrs.Spec.PlacementRefs {
			keys = append(keys, mwrs.Namespace+"/"+ref.Name)
		}
		return keys
	}); err != nil {
		return fmt.Errorf("index ManifestWorkReplicaSets by placement: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &workv1.ManifestWork{}, ownerIndex, ownerKey); err != nil {
		return fmt.Errorf("index ManifestWorks by their ManifestWorkReplicaSet: %w", err)
	}
	chunk := &metav1.PartialObjectMetadata{}
	chunk.SetGroupVersionKind(payloadv1alpha1.GroupVersion.WithKind("ManifestChunk"))
	// A set waits for a chunk missing from its namespace until it is
	// created; chunks are never updated, and a deleted one brings nothing.
	created := predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	hasMWRSLabel := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return workv1alpha1.HasOwnerLabel(o)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.ManifestWorkReplicaSet{}).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.byPlacement(ctx, o.GetNamespace(), o.GetName())
		})).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			name := o.GetLabels()[clusterv1beta1.PlacementLabel]
			if name == "" {
				return nil
			}
			return r.byPlacement(ctx, o.GetNamespace(), name)
		})).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			ns, name, ok := workv1alpha1.OwnerOf(o)
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
		}), builder.WithPredicates(hasMWRSLabel)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.withLabelOverrides),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&rolloutv1alpha1.RolloutApproval{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			a := o.(*rolloutv1alpha1.RolloutApproval)
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.ManifestWorkReplicaSet}}}
		})).
		WatchesMetadata(chunk, handler.EnqueueRequestsFromMapFunc(r.listing), builder.WithPredicates(created)).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
}

// byPlacement returns the ManifestWorkReplicaSets referencing the
// Placement namespace/name.
func (r *Reconciler) byPlacement(ctx context.Context, namespace, name string) []reconcile.Request {
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{placementIndex: namespace + "/" + name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManifestWorkReplicaSets by placement", "placement", namespace+"/"+name)
		return nil
	}
	return requests(list.Items, func(*workv1alpha1.ManifestWorkReplicaSet) bool { return true })
}

// listing returns the ManifestWorkReplicaSets of a chunk's namespace whose
// template's payload lists it: a set waiting for that chunk, missing when
// it copied the payload to a cluster, goes on at once instead of after its
// backoff. A chunk's name holds its digest, which a template's one
// manifest holds when its payload lists the chunk: a search for it, rather
// than decoding the payload, keeps the thousands of creations of a large
// payload's chunks cheap.
func (r *Reconciler) listing(ctx context.Context, chunk client.Object) []reconcile.Request {
	digest, ok := strings.CutPrefix(chunk.GetName(), payloadv1alpha1.ChunkNamePrefix)
	if !ok || digest == "" {
		return nil
	}
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(chunk.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManifestWorkReplicaSets for a ManifestChunk", "chunk", klog.KObj(chunk))
		return nil
	}
	return requests(list.Items, func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		manifests := m.Spec.ManifestWorkTemplate.Workload.Manifests
		return len(manifests) == 1 && bytes.Contains(manifests[0].Raw, []byte(payloadv1alpha1.DigestPrefix+digest))
	})
}

// withLabelOverrides returns the ManifestWorkReplicaSets with an override
// choosing clusters by label: a cluster's labels changed.
func (r *Reconciler) withLabelOverrides(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManifestWorkReplicaSets")
		return nil
	}
	return requests(list.Items, func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		for _, ov := range m.Spec.Overrides {
			if ov.ClusterSelector != nil {
				return true
			}
		}
		return false
	})
}

// requests turns the items that keep passes into reconcile requests.
func requests(items []workv1alpha1.ManifestWorkReplicaSet, keep func(*workv1alpha1.ManifestWorkReplicaSet) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range items {
		if keep(&items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])})
		}
	}
	return out
}
