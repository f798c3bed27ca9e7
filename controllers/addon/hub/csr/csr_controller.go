package csr

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// Approval reason and event, as OCM's add-on manager has them.
const (
	// ReasonAutoApproved is the Approved condition reason of every request
	// this controller approves.
	ReasonAutoApproved = "AutoApprovedByHubCSRApprovingController"
	eventApproved      = "AddonCSRAutoApproved"
	eventPending       = "AddonCSRPending"
)

// Reconciler approves add-on agents' certificate requests per
// csr.DecideAddon.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on the requests it approves.
	Recorder events.EventRecorder
}

// Requests are approved after reading the add-on's ManagedClusterAddOn, its
// cluster and, for a custom signer, its AddOnTemplate. Approving a request
// needs approve on its signer: kubernetes.io/kube-apiserver-client, and
// every custom signer, whose names only the AddOnTemplates know, so the
// approve rule names no signer (as OCM's add-on manager has it); the
// reconciler itself never approves another kubernetes.io/ signer.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,verbs=approve
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons;addontemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// SetupWithManager registers the reconciler. Pending add-on requests are
// reconsidered when their ManagedClusterAddOn comes, goes or changes its
// registrations, and when their cluster comes, goes, or is accepted or
// denied.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := csr.IndexByCluster(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-csr").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			req := obj.(*certificatesv1.CertificateSigningRequest)
			return csr.IsAddonRequest(req) && !csr.Decided(req)
		}))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, true, csr.OfCluster(obj.GetNamespace()), client.MatchingLabels{addonv1alpha1.AddonLabelKey: obj.GetName()})
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*addonv1alpha1.ManagedClusterAddOn), e.ObjectNew.(*addonv1alpha1.ManagedClusterAddOn)
			return !equality.Semantic.DeepEqual(o.Status.Registrations, n.Status.Registrations)
		}})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, true, csr.OfCluster(obj.GetName()), client.HasLabels{addonv1alpha1.AddonLabelKey})
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return lookup.ClusterAccepted(e.ObjectOld.(*clusterv1.ManagedCluster)) != lookup.ClusterAccepted(e.ObjectNew.(*clusterv1.ManagedCluster))
		}})).
		Complete(r)
}

// Reconcile approves one add-on request when the policy allows it.
func (r *Reconciler) Reconcile(ctx context.Context, key ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, key.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if csr.Decided(obj) || !csr.IsAddonRequest(obj) {
		return ctrl.Result{}, nil
	}
	req, err := csr.ParseRequest(obj)
	if err != nil {
		log.V(2).Info("Leaving malformed add-on request pending", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	facts, _, err := lookup.AddonRequestFacts(ctx, r.Client, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	approve, why := csr.DecideAddon(req, facts)
	if !approve {
		log.V(2).Info("Leaving add-on request pending", "cluster", req.Cluster, "addon", req.Addon, "signer", req.SignerName, "requester", req.Requester, "reason", why)
		if registration.IsCustomSigner(req.SignerName) && facts.AddonExists {
			// No condition says why a request waits: an Event does, once
			// per change of what the decision depends on.
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventPending, "Approve", "left pending: %s", why)
		}
		return ctrl.Result{}, nil
	}
	if err := csr.ApproveRequest(ctx, r.Client, obj, ReasonAutoApproved, "Auto approving addon agent certificate: "+why); err != nil {
		return ctrl.Result{}, err
	}
	log.V(2).Info("Approved add-on request", "cluster", req.Cluster, "addon", req.Addon, "reason", why)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventApproved, "Approve", "approved: %s", why)
	return ctrl.Result{}, nil
}
