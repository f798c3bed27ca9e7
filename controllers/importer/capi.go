package importer

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	capiv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Cluster API's Clusters and their kubeconfig Secrets (<cluster>-kubeconfig,
// in the Cluster's namespace, whose names the importer cannot know in
// advance, so it may get any Secret by name, never list or watch them).
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=create

// kubeconfigWait is how long the importer waits before it looks again for
// the kubeconfig Secret of a Cluster, which it does not watch.
const kubeconfigWait = time.Minute

// capiRecheck is how often an importer started on a hub without Cluster
// API looks for it again.
const capiRecheck = 30 * time.Second

// errCAPIInstalled ends the importer when Cluster API was installed on the
// hub after it started: its Pod restarts and watches the Clusters then.
var errCAPIInstalled = errors.New("the hub now serves Cluster API's Clusters (cluster.x-k8s.io/v1beta2): restarting to import their clusters")

// watchForCAPI returns a runnable that ends with errCAPIInstalled once the
// hub serves Cluster API's Clusters, checked every capiRecheck with a fresh
// discovery.
func watchForCAPI(cfg *rest.Config) manager.RunnableFunc {
	return func(ctx context.Context) error {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		t := time.NewTicker(capiRecheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			if _, err := dc.ServerResourcesForGroupVersion(capiv1.GroupVersion.String()); err == nil {
				return errCAPIInstalled
			}
		}
	}
}

// servesCAPI reports whether the hub serves Cluster API's Clusters.
func servesCAPI(mgr ctrl.Manager) (bool, error) {
	_, err := mgr.GetRESTMapper().RESTMapping(capiv1.GroupVersion.WithKind(capiv1.ClusterKind).GroupKind(), capiv1.GroupVersion.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		ctrl.Log.WithName("cluster-importer").Info("The hub serves no Cluster API Clusters (cluster.x-k8s.io/v1beta2): importing from import Secrets; the importer restarts once Cluster API is installed")
		return false, nil
	}
	return false, fmt.Errorf("look for Cluster API's Clusters on the hub: %w", err)
}

// CAPIAnnotation is imp.CAPIAnnotation.
const CAPIAnnotation = imp.CAPIAnnotation

// reconcileCAPI imports cluster name from its Cluster API Cluster once the
// Cluster's control plane is initialized and its kubeconfig Secret exists.
// A Cluster in the namespace of its own name gets a ManagedCluster of that
// name when there is none; a Cluster elsewhere is imported only into a
// ManagedCluster that names it (CAPIAnnotation), which only who may update
// that Cluster sets (admission), never a bootstrap or cluster identity.
func (r *Reconciler) reconcileCAPI(ctx context.Context, name string) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mc := &clusterv1.ManagedCluster{}
	err := r.Get(ctx, types.NamespacedName{Name: name}, mc)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	key := types.NamespacedName{Namespace: name, Name: name}
	if exists && mc.Annotations[CAPIAnnotation] != "" {
		ns, n, ok := splitKey(mc.Annotations[CAPIAnnotation])
		if !ok {
			return ctrl.Result{}, nil
		}
		key = types.NamespacedName{Namespace: ns, Name: n}
	}
	capi := &capiv1.Cluster{}
	if err := r.Get(ctx, key, capi); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !capi.DeletionTimestamp.IsZero() || (exists && !mc.DeletionTimestamp.IsZero()) {
		return ctrl.Result{}, nil
	}
	if !exists {
		mc = &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{CAPIAnnotation: key.String()}}}
		if err := r.Create(ctx, mc); err != nil {
			return ctrl.Result{}, client.IgnoreAlreadyExists(err)
		}
		log.Info("Created the ManagedCluster of a Cluster API Cluster", "cluster", name, "capiCluster", key.String())
		r.recorder.Eventf(mc, capi, corev1.EventTypeNormal, "ManagedClusterCreated", "Import", "Created ManagedCluster %s for Cluster API Cluster %s", name, key)
	}
	// The Cluster's own namespace is the cluster namespace: adopted, so
	// that deleting the ManagedCluster never deletes it, and with it the
	// Cluster. A cluster imported before the hub marked namespaces is
	// adopted too.
	if key.Namespace == name {
		if err := r.adoptNamespace(ctx, mc); err != nil {
			return ctrl.Result{}, err
		}
	}
	if meta.IsStatusConditionTrue(mc.Status.Conditions, imp.ConditionImportSucceeded) {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(mc, r.Client)
	cond, requeue, importErr := r.importCAPI(ctx, mc, capi)
	meta.SetStatusCondition(&mc.Status.Conditions, cond)
	if perr := h.Patch(ctx, mc); perr != nil {
		return patch.RetryStale(ctx, perr, apierrors.IsNotFound)
	}
	if importErr != nil {
		n := r.fail(name, string(capi.UID))
		r.recorder.Eventf(mc, nil, corev1.EventTypeWarning, cond.Reason, "Import", "%s", cond.Message)
		log.Info("Import from Cluster API failed; retrying", "cluster", name, "reason", cond.Reason, "attempts", n)
		return ctrl.Result{RequeueAfter: backoff(n)}, nil
	}
	if requeue > 0 {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	r.forget(name)
	r.recorder.Eventf(mc, nil, corev1.EventTypeNormal, imp.ReasonImportSucceed, "Import", "%s", cond.Message)
	log.Info("Imported the cluster from Cluster API", "cluster", name, "capiCluster", key.String())
	return ctrl.Result{}, nil
}

// importCAPI imports mc with the kubeconfig of capi, returning the
// condition, how long to wait before looking again when the Cluster is not
// ready, and the error of a failed import.
func (r *Reconciler) importCAPI(ctx context.Context, mc *clusterv1.ManagedCluster, capi *capiv1.Cluster) (metav1.Condition, time.Duration, error) {
	ref := capi.Namespace + "/" + capi.Name
	notFound := func(format string, args ...any) (metav1.Condition, time.Duration, error) {
		return metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionFalse, Reason: imp.ReasonKubeConfigNotFound,
			Message: fmt.Sprintf(format, args...)}, kubeconfigWait, nil
	}
	if init := capi.Status.Initialization.ControlPlaneInitialized; init == nil || !*init {
		return notFound("Cluster API Cluster %s: its control plane is not initialized yet", ref)
	}
	secret := types.NamespacedName{Namespace: capi.Namespace, Name: imp.CAPIKubeconfigSecret(capi.Name)}
	sec := &corev1.Secret{}
	if err := r.reader.Get(ctx, secret, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound("Cluster API Cluster %s: its kubeconfig Secret %s does not exist yet", ref, secret)
		}
		cond := metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionFalse, Reason: imp.ReasonKubeConfigGetFailed,
			Message: fmt.Sprintf("read the kubeconfig Secret %s of Cluster API Cluster %s: %v", secret, ref, err)}
		return cond, 0, err
	}
	value, ok := sec.Data[imp.CAPIKubeconfigKey]
	if !ok {
		err := fmt.Errorf("the kubeconfig Secret %s of Cluster API Cluster %s has no key %s", secret, ref, imp.CAPIKubeconfigKey)
		return metav1.Condition{Type: imp.ConditionImportSucceeded, Status: metav1.ConditionFalse, Reason: imp.ReasonKubeConfigGetFailed, Message: err.Error()}, 0, err
	}
	cond, err := r.importCluster(ctx, mc, "the kubeconfig Secret "+secret.String()+" of Cluster API Cluster "+ref, map[string][]byte{imp.KubeconfigKey: value})
	return cond, 0, err
}

// splitKey splits namespace/name.
func splitKey(s string) (namespace, name string, ok bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], i > 0 && i < len(s)-1
		}
	}
	return "", "", false
}
