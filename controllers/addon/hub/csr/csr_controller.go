package csr

import (
	"context"
	"fmt"

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
)

// Reconciler approves add-on agents' certificate requests per
// csr.DecideAddon.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on the requests it approves.
	Recorder events.EventRecorder
}

// Requests are approved for the kube-apiserver-client signer after reading
// the add-on's ManagedClusterAddOn and its cluster.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// SetupWithManager registers the reconciler. Pending add-on requests are
// reconsidered when their ManagedClusterAddOn comes, goes or changes its
// registrations, and when their cluster comes, goes, or is accepted or
// denied.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-csr").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			req := obj.(*certificatesv1.CertificateSigningRequest)
			return csr.IsAddonRequest(req) && !csr.Decided(req)
		}))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, true, client.MatchingLabels{clusterv1.ClusterNameLabelKey: obj.GetNamespace(), addonv1alpha1.AddonLabelKey: obj.GetName()})
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*addonv1alpha1.ManagedClusterAddOn), e.ObjectNew.(*addonv1alpha1.ManagedClusterAddOn)
			return !equality.Semantic.DeepEqual(o.Status.Registrations, n.Status.Registrations)
		}})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, true, client.MatchingLabels{clusterv1.ClusterNameLabelKey: obj.GetName()}, client.HasLabels{addonv1alpha1.AddonLabelKey})
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return clusterAccepted(e.ObjectOld.(*clusterv1.ManagedCluster)) != clusterAccepted(e.ObjectNew.(*clusterv1.ManagedCluster))
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
	facts, err := r.facts(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	approve, why := csr.DecideAddon(req, facts)
	if !approve {
		log.V(2).Info("Leaving add-on request pending", "cluster", req.Cluster, "addon", req.Addon, "requester", req.Requester, "reason", why)
		return ctrl.Result{}, nil
	}
	if err := csr.ApproveRequest(ctx, r.Client, obj, ReasonAutoApproved, "Auto approving addon agent certificate: "+why); err != nil {
		return ctrl.Result{}, err
	}
	log.V(2).Info("Approved add-on request", "cluster", req.Cluster, "addon", req.Addon, "reason", why)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventApproved, "Approve", "approved: %s", why)
	return ctrl.Result{}, nil
}

// facts gathers what DecideAddon needs to know about the hub for req.
func (r *Reconciler) facts(ctx context.Context, req csr.Request) (csr.AddonFacts, error) {
	var facts csr.AddonFacts
	if req.Cluster == "" || req.Addon == "" {
		return facts, nil // ValidateAddon refuses it
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: req.Cluster}, mc); client.IgnoreNotFound(err) != nil {
		return facts, fmt.Errorf("get ManagedCluster %s: %w", req.Cluster, err)
	} else if err == nil {
		facts.ClusterAccepted = clusterAccepted(mc)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: req.Cluster, Name: req.Addon}, mca); client.IgnoreNotFound(err) != nil {
		return facts, fmt.Errorf("get ManagedClusterAddOn %s/%s: %w", req.Cluster, req.Addon, err)
	} else if err == nil {
		facts.AddonExists = true
		facts.Subjects = csr.RegistrationSubjects(req.Cluster, req.Addon, mca.Status.Registrations)
	}
	return facts, nil
}

// clusterAccepted reports whether the hub accepts mc's agents: accepted by
// an administrator, with HubAcceptedManagedCluster True, and not being
// deleted.
func clusterAccepted(mc *clusterv1.ManagedCluster) bool {
	return mc.Spec.HubAcceptsClient && mc.IsAccepted() && mc.DeletionTimestamp.IsZero()
}
