package payloadgc

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "manifestchunk-gc"

// DefaultGracePeriod is how long after its creation a chunk that nothing
// lists is kept.
const DefaultGracePeriod = 10 * time.Minute

// Reconciler deletes the unlisted ManifestChunks of one namespace; its
// requests name the namespace only.
type Reconciler struct {
	// Client reads ManifestWorks, ManifestWorkReplicaSets, the sets'
	// ControllerRevisions and the chunks' metadata from the cache, and
	// deletes chunks.
	Client client.Client
	// GracePeriod is DefaultGracePeriod when zero.
	GracePeriod time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=work.kubectl-ocm.io,resources=manifestchunks,verbs=list;watch;delete

// SetupWithManager registers the chunk collector with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	return (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
}

// SetupWithManager registers r with mgr. It watches the chunks' metadata
// only (their data stays out of the cache), the ManifestWorks and the
// ManifestWorkReplicaSets, each event bringing back its namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
	})
	chunk := &metav1.PartialObjectMetadata{}
	chunk.SetGroupVersionKind(payloadv1alpha1.GroupVersion.WithKind("ManifestChunk"))
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WatchesMetadata(chunk, byNamespace, builder.OnlyMetadata).
		Watches(&workv1.ManifestWork{}, byNamespace).
		Watches(&workv1alpha1.ManifestWorkReplicaSet{}, byNamespace).
		Complete(r)
}

// Reconcile deletes the chunks of namespace req.Name that nothing lists and
// whose grace period is over, and comes back when the next one's ends.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	chunks := &metav1.PartialObjectMetadataList{}
	chunks.SetGroupVersionKind(payloadv1alpha1.GroupVersion.WithKind("ManifestChunkList"))
	if err := r.Client.List(ctx, chunks, client.InNamespace(ns)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ManifestChunks of %s: %w", ns, err)
	}
	if len(chunks.Items) == 0 {
		return ctrl.Result{}, nil
	}
	listed, err := r.listed(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	grace := r.GracePeriod
	if grace <= 0 {
		grace = DefaultGracePeriod
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	var next time.Duration
	for i := range chunks.Items {
		c := &chunks.Items[i]
		if listed[c.Name] || !c.DeletionTimestamp.IsZero() {
			continue
		}
		if left := c.CreationTimestamp.Add(grace).Sub(now); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		uid := c.UID
		err := r.Client.Delete(ctx, c, client.Preconditions{UID: &uid})
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return ctrl.Result{}, fmt.Errorf("delete ManifestChunk %s/%s: %w", ns, c.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Deleted a ManifestChunk nothing lists", "chunk", klog.KObj(c))
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// listed returns the names of the chunks that something in namespace ns
// lists: a ManifestWork, a set's template or a revision a set keeps.
func (r *Reconciler) listed(ctx context.Context, ns string) (map[string]bool, error) {
	listed := map[string]bool{}
	add := func(spec *workv1.ManifestWorkSpec) {
		for _, name := range payload.Listed(spec) {
			listed[name] = true
		}
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ManifestWorks of %s: %w", ns, err)
	}
	for i := range works.Items {
		add(&works.Items[i].Spec)
	}
	sets := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ManifestWorkReplicaSets of %s: %w", ns, err)
	}
	for i := range sets.Items {
		add(&sets.Items[i].Spec.ManifestWorkTemplate)
	}
	revs := &appsv1.ControllerRevisionList{}
	if err := r.Client.List(ctx, revs, client.InNamespace(ns), client.HasLabels{revision.SetLabel}); err != nil {
		return nil, fmt.Errorf("list the ControllerRevisions of %s: %w", ns, err)
	}
	for i := range revs.Items {
		c, err := revision.Decode(&revs.Items[i])
		if err != nil {
			// A revision that cannot be read lists nothing we can keep.
			continue
		}
		add(&c.Template)
	}
	return listed, nil
}
