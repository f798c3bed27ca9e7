package importer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	capiv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// What the importer reads and writes on the hub.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=patch;update
// +kubebuilder:rbac:groups="",resources=secrets,resourceNames=auto-import-secret,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,resourceNames=cluster-import-config,verbs=get
// +kubebuilder:rbac:groups="",resources=namespaces,resourceNames=kube-system,verbs=get
// +kubebuilder:rbac:groups="",namespace=kube-public,resources=configmaps,resourceNames=cluster-info;kube-root-ca.crt,verbs=get
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,resourceNames=open-cluster-management-image-pull-credentials,verbs=get
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace="{{ .Namespace }}",resources=leases,verbs=get;create;update
// The cluster-bound bootstrap identity (config.ClusterBootstrapObjects) and
// its tokens; admission policy importer.open-cluster-management.io limits
// these to agent-registration-bootstrap-<cluster>. The bootstrap role is
// bound once to their namespace's group, so the importer binds nothing.
// +kubebuilder:rbac:groups="",namespace="{{ .ClusterBootstrapNamespace }}",resources=serviceaccounts,verbs=get;create;patch
// +kubebuilder:rbac:groups="",namespace="{{ .ClusterBootstrapNamespace }}",resources=serviceaccounts/token,verbs=create

// FieldManager owns what the importer writes, on the hub and on the
// imported cluster.
const FieldManager = "ocm-importer"

// Workers is how many clusters the importer imports at a time: each
// import waits on another cluster's API server (up to
// Options.RequestTimeout per request), so one slow or unreachable cluster
// holds up no more than its worker.
const Workers = 10

// Options configure the importer.
type Options struct {
	// Namespace is the importer's own namespace, where the operator copies
	// the image pull Secret the Klusterlet operator is installed with.
	Namespace string
	// AgentImage is the ocm-controller image the imported cluster runs.
	AgentImage string
	// HubAPIServer is the hub's API server URL as the imported clusters
	// reach it; empty reads it from ConfigMap kube-public/cluster-info.
	HubAPIServer string
	// Guard is the rule for the addresses the importer dials.
	Guard imp.Guard
	// RequestTimeout bounds each request to an imported cluster.
	RequestTimeout time.Duration
	// Renderers are what the Klusterlet is rendered from, in order
	// (config.ImportRendererAuto, config.ImportRendererFromConfigSecret);
	// empty is config.ImportRendererAuto.
	Renderers []string
}

// Reconciler imports the cluster of each ManagedCluster whose namespace
// holds an import Secret.
type Reconciler struct {
	client.Client
	// reader reads from the hub's API server directly (the hub's CA
	// bundle, cluster-info, the pull Secret), which the cache does not hold.
	reader   client.Reader
	recorder events.EventRecorder
	opts     Options
	// hubID is the UID of the hub's namespace kube-system: a credential
	// that reaches a cluster with the same one reaches the hub itself.
	hubID types.UID

	mu sync.Mutex
	// capi is whether the hub serves Cluster API's Clusters, whose
	// clusters are imported too (capi.go).
	capi bool

	// failures counts the failed attempts with each version of an import
	// Secret (by namespace), for its autoImportRetry.
	failures map[string]failureCount
}

// failureCount is the failed attempts with one version of an import Secret.
type failureCount struct {
	hash string
	n    int
}

// SetupWithManager adds the importer to mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.AgentImage == "" {
		return errors.New("the importer needs the agent image (--agent-image)")
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	ns := &corev1.Namespace{}
	if err := mgr.GetAPIReader().Get(ctx, types.NamespacedName{Name: metav1.NamespaceSystem}, ns); err != nil {
		return fmt.Errorf("read the hub's namespace kube-system, which tells the hub from the clusters to import: %w", err)
	}
	r := &Reconciler{
		Client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder("cluster-importer"), opts: opts, hubID: ns.UID,
		failures: map[string]failureCount{},
	}
	isImportSecret := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == imp.SecretName })
	b := ctrl.NewControllerManagedBy(mgr).
		Named("cluster-importer").
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		}), builder.WithPredicates(isImportSecret))
	var err error
	if r.capi, err = servesCAPI(mgr); err != nil {
		return err
	}
	if !r.capi {
		if err := mgr.Add(watchForCAPI(mgr.GetConfig())); err != nil {
			return err
		}
	}
	if r.capi {
		b = b.Watches(&capiv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		}))
	}
	return b.Complete(r)
}

// Reconcile imports cluster req.Name when its namespace holds an import
// Secret that was not used yet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	sec := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: req.Name, Name: imp.SecretName}, sec)
	if apierrors.IsNotFound(err) {
		if r.capi {
			return r.reconcileCAPI(ctx, req.Name)
		}
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	hash := imp.DataHash(sec.Data)
	if sec.Annotations[imp.ImportedAnnotation] == hash || !sec.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Get(ctx, types.NamespacedName{Name: req.Name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			// Only who may create ManagedClusters chooses which clusters
			// are imported; a namespace's editor cannot.
			r.recorder.Eventf(sec, nil, corev1.EventTypeWarning, "NoManagedCluster", "Import",
				"There is no ManagedCluster %s: create it (kubectl ocm import creates it) and the cluster is imported with this Secret", req.Name)
			log.Info("An import Secret waits for its ManagedCluster", "cluster", req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	retries, err := imp.Retries(sec.Data)
	if err == nil && retries >= 0 && r.failed(req.Name, hash) > retries {
		return ctrl.Result{}, nil
	}

	if err := r.adoptNamespace(ctx, cluster); err != nil {
		return ctrl.Result{}, err
	}
	h := patch.NewHelper(cluster, r.Client)
	cond, importErr := r.importCluster(ctx, cluster, "Secret "+sec.Namespace+"/"+sec.Name, sec.Data)
	if err != nil {
		// A bad autoImportRetry is the Secret's fault too; the import is
		// tried, and the condition says so.
		cond = metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionFalse, Reason: imp.ReasonKubeConfigGetFailed,
			Message: fmt.Sprintf("Secret %s/%s: %v", req.Name, imp.SecretName, err)}
		importErr = err
	}
	n := 0
	if importErr != nil {
		n = r.fail(req.Name, hash)
	}
	cond.Message += imp.Note(sec.ResourceVersion, n)
	meta.SetStatusCondition(&cluster.Status.Conditions, cond)
	if perr := h.Patch(ctx, cluster); perr != nil {
		return patch.RetryStale(ctx, perr, apierrors.IsNotFound)
	}
	if importErr != nil {
		r.recorder.Eventf(cluster, nil, corev1.EventTypeWarning, cond.Reason, "Import", "%s", cond.Message)
		if retries >= 0 && n > retries {
			log.Info("Import failed; no retries left with this Secret", "cluster", req.Name, "reason", cond.Reason, "attempts", n)
			return ctrl.Result{}, nil
		}
		log.Info("Import failed; retrying", "cluster", req.Name, "reason", cond.Reason, "attempts", n)
		return ctrl.Result{RequeueAfter: backoff(n)}, nil
	}
	r.forget(req.Name)
	r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, imp.ReasonImportSucceed, "Import", "%s", cond.Message)
	log.Info("Imported the cluster", "cluster", req.Name)
	if imp.Kept(sec) {
		sec = sec.DeepCopy()
		metav1.SetMetaDataAnnotation(&sec.ObjectMeta, imp.ImportedAnnotation, hash)
		return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, sec))
	}
	// The credential is not kept past the import.
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, sec, client.Preconditions{UID: &sec.UID}))
}

// backoff is the wait before attempt n+1 after n failed ones: 10 s
// doubling up to 5 minutes.
func backoff(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func (r *Reconciler) failed(cluster, hash string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.failures[cluster]; f.hash == hash {
		return f.n
	}
	return 0
}

func (r *Reconciler) fail(cluster, hash string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[cluster]
	if f.hash != hash {
		f = failureCount{hash: hash}
	}
	f.n++
	r.failures[cluster] = f
	return f.n
}

func (r *Reconciler) forget(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, cluster)
}

// importCluster installs the Klusterlet on cluster with the credential of
// sec and returns the condition that says how it went, with the error when
// it failed.
func (r *Reconciler) importCluster(ctx context.Context, cluster *clusterv1.ManagedCluster, ref string, data map[string][]byte) (metav1.Condition, error) {
	fail := func(reason, format string, args ...any) (metav1.Condition, error) {
		err := fmt.Errorf(format, args...)
		return metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionFalse, Reason: reason, Message: err.Error()}, err
	}
	cred, err := imp.ReadCredential(data)
	if err != nil {
		return fail(imp.ReasonKubeConfigGetFailed, "%s: %v", ref, err)
	}
	cfg := r.opts.Guard.Guarded(cred, r.opts.RequestTimeout)
	cfg.UserAgent = FieldManager
	target, err := client.New(cfg, client.Options{Scheme: r.Scheme()})
	if err != nil {
		return fail(imp.ReasonKubeConfigGetFailed, "%s: %v", ref, err)
	}
	ns := &corev1.Namespace{}
	if err := target.Get(ctx, types.NamespacedName{Name: metav1.NamespaceSystem}, ns); err != nil {
		return fail(imp.ReasonImportFailed, "cannot reach the cluster at %s with the credential of %s: %s", cred.Host, ref, reachCause(err))
	}
	if ns.UID == r.hubID {
		return fail(imp.ReasonKubeConfigGetFailed, "the credential of %s reaches the hub itself (%s has the hub's namespace kube-system): write the kubeconfig of the cluster to import", ref, cred.Host)
	}
	// A cluster that already runs an agent registering under another name
	// is that cluster's: importing it again would take it from its hub
	// entry (its lease goes Unknown, its Placements fail over).
	existing := &operatorv1.Klusterlet{}
	err = target.Get(ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, existing)
	switch {
	case err == nil && existing.Spec.ClusterName != "" && existing.Spec.ClusterName != cluster.Name:
		return fail(imp.ReasonImportFailed, "the cluster at %s already runs a Klusterlet registering as %s: importing it as %s would take it from %s; "+
			"unjoin it first (`kubectl ocm unjoin`), or import it as %s", cred.Host, existing.Spec.ClusterName, cluster.Name, existing.Spec.ClusterName, existing.Spec.ClusterName)
	case err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return fail(imp.ReasonImportFailed, "read the Klusterlet of the cluster at %s with the credential of %s: %s", cred.Host, ref, reachCause(err))
	}
	objs, err := r.render(ctx, cluster.Name)
	if err != nil {
		return fail(imp.ReasonConfigRendererFailed, "render the Klusterlet of cluster %s: %v", cluster.Name, err)
	}
	if err := apply.Apply(ctx, target, objs, apply.Options{FieldManager: FieldManager}); err != nil {
		return fail(imp.ReasonImportFailed, "install the Klusterlet on the cluster at %s with the credential of %s: %s", cred.Host, ref, reachCause(err))
	}
	msg := fmt.Sprintf("Installed the Klusterlet operator and the Klusterlet on the cluster at %s; its agent registers as %s with a bootstrap token bound to that name", cred.Host, cluster.Name)
	if !cluster.Spec.HubAcceptsClient {
		msg += fmt.Sprintf(". Accept it with `kubectl ocm accept --clusters %s` unless its bootstrap identity is auto-approved", cluster.Name)
	}
	return metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionTrue, Reason: imp.ReasonImportSucceed, Message: msg}, nil
}

// reachCause says what an error of a request to the imported cluster
// means for the user.
func reachCause(err error) string {
	switch {
	case apierrors.IsUnauthorized(err):
		return "the cluster rejects the credential (401 Unauthorized): write a valid token or client certificate into the Secret"
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("the credential may not do this (%v): the import needs a cluster-admin credential", err)
	case strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "certificate"):
		return fmt.Sprintf("%v: the CA in the Secret does not verify the cluster's serving certificate; write the cluster's CA", err)
	}
	return err.Error()
}
