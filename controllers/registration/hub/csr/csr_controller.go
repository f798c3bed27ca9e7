package csr

import (
	"context"
	"fmt"
	"slices"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// Approval reason and events, as OCM has them.
const (
	// ReasonAutoApproved is the Approved condition reason of every request
	// this controller approves.
	ReasonAutoApproved = "AutoApprovedByHubCSRApprovingController"
	eventRenewal       = "ManagedClusterCSRAutoApproved"
	eventAutoApproved  = "ManagedClusterAutoApproved"
)

// Reconciler approves agent certificate requests per csr.Decide.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly: a first join is
	// auto-accepted from the ManagedCluster as stored, which the cache may
	// not hold yet when the agent created it a moment before its request.
	APIReader client.Reader
	// Recorder records events on the requests it approves.
	Recorder events.EventRecorder
	// ClusterManagerName names the ClusterManager whose
	// spec.registrationConfiguration.autoApproveUsers are auto-approved.
	ClusterManagerName string
	// AutoApproveUsers are auto-approved in addition (--auto-approved-csr-users).
	AutoApproveUsers []string
	// IgnoreClusterManagerUsers leaves the ClusterManager's autoApproveUsers
	// and the csr registration driver's autoApprovedIdentities out (feature
	// gate ManagedClusterAutoApproval off).
	IgnoreClusterManagerUsers bool
}

// Requests are approved for the kube-apiserver-client signer and the token
// driver's (certs.AgentTokenSignerName), renewals after
// a SubjectAccessReview. Auto-approving a first join accepts the cluster, as
// read from the API server, which the accept admission policy allows only
// with update on managedclusters/accept.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client;kubectl-ocm.io/agent-token,verbs=approve
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=register.open-cluster-management.io,resources=managedclusters/accept,verbs=update
// +kubebuilder:rbac:groups=operator.open-cluster-management.io,resources=clustermanagers,verbs=list;watch

// SetupWithManager registers the reconciler. Requests are reconsidered when
// their cluster changes (for example when it is accepted) and when the
// ClusterManager's auto-approve list changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := csr.IndexByCluster(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("csr").
		// Add-on agents' requests are the add-on approver's.
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return !csr.IsAddonRequest(obj.(*certificatesv1.CertificateSigningRequest))
		}))).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, false, csr.OfCluster(obj.GetName()))
		})).
		Watches(&operatorv1.ClusterManager{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return csr.PendingRequests(ctx, r.Client, false, client.HasLabels{clusterv1.ClusterNameLabelKey})
		})).
		Complete(r)
}

// Reconcile approves one request when the policy allows it.
func (r *Reconciler) Reconcile(ctx context.Context, key ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, key.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if csr.Decided(obj) || obj.Labels[clusterv1.ClusterNameLabelKey] == "" || csr.IsAddonRequest(obj) {
		return ctrl.Result{}, nil
	}
	req, err := csr.ParseRequest(obj)
	if err != nil {
		log.V(2).Info("Leaving malformed request pending", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	facts, err := r.facts(ctx, req.Cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	action, why := csr.Decide(req, facts)
	if action == csr.ApproveIfAuthorized {
		allowed, err := r.mayRenew(ctx, obj, req.Cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		// An allowed renewal's requester holds the current credential: its
		// key is the agent's from now on, recorded before the approval so
		// that a retry records it too.
		if !allowed {
			action, why = csr.LeavePending, "the requester may not renew managedclusters/clientcertificates of cluster "+req.Cluster
		} else if err := r.recordAgentKey(ctx, req.Cluster, req.Key()); err != nil {
			return ctrl.Result{}, err
		}
	}
	if action == csr.Approve {
		// A first join filed with a bootstrap token revoked since is no
		// one's to approve.
		revoked, err := csr.Revoked(ctx, r.APIReader, req)
		if err != nil {
			return ctrl.Result{}, err
		}
		if revoked != "" {
			action, why = csr.LeavePending, revoked
		}
	}
	if action == csr.LeavePending {
		log.V(2).Info("Leaving request pending", "cluster", req.Cluster, "requester", req.Requester, "reason", why)
		return ctrl.Result{}, nil
	}
	if action == csr.Approve {
		// A first join by an auto-approved identity is the hub's half of
		// the double opt-in: accept the cluster too, once.
		if err := r.acceptOnce(ctx, req); err != nil {
			return ctrl.Result{}, err
		}
	}
	// A conflict is a request changed since the cache's copy: most often
	// approved by an earlier reconcile the cache has not shown yet, which
	// the next reconcile sees.
	return patch.RetryStale(ctx, r.approve(ctx, obj, action, why))
}

// acceptOnce sets spec.hubAcceptsClient on a cluster whose first-join
// request req is auto-approved, and records it in the
// automatically-accepted-on annotation, with req's metadata.uid in
// automatically-accepted-for and req's key as the agent's, so that a
// cluster an administrator denies later is not accepted again by its next
// request, and that the cluster is registered again automatically only with
// its agent's key. A cluster that does not exist yet is left alone: the
// agent creates its ManagedCluster before its first request.
func (r *Reconciler) acceptOnce(ctx context.Context, req csr.Request) error {
	mc := &clusterv1.ManagedCluster{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: req.Cluster}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, done := mc.Annotations[clusterv1.AutomaticallyAcceptedOnAnnotationKey]; done || mc.Spec.HubAcceptsClient || !mc.DeletionTimestamp.IsZero() {
		return nil
	}
	h := patch.NewHelper(mc, r.Client)
	mc.Spec.HubAcceptsClient = true
	metav1.SetMetaDataAnnotation(&mc.ObjectMeta, clusterv1.AutomaticallyAcceptedOnAnnotationKey, time.Now().UTC().Format(time.RFC3339))
	metav1.SetMetaDataAnnotation(&mc.ObjectMeta, clusterv1.AutomaticallyAcceptedForAnnotationKey, req.RequestUID)
	csr.SetAgentKey(mc, req.Key())
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("accept ManagedCluster %s: %w", req.Cluster, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Accepted cluster whose first-join request was auto-approved", "cluster", req.Cluster, "agentKey", req.Key())
	r.Recorder.Eventf(mc, nil, corev1.EventTypeNormal, "ManagedClusterAccepted", "Accept", "accepted automatically: its agent's identity is in the auto-approve list; its agent's key is %s", req.Key())
	return nil
}

// recordAgentKey records key as the key of cluster's agent.
func (r *Reconciler) recordAgentKey(ctx context.Context, cluster, key string) error {
	mc := &clusterv1.ManagedCluster{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	h := patch.NewHelper(mc, r.Client)
	if !csr.SetAgentKey(mc, key) {
		return nil
	}
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("record the key of the agent of ManagedCluster %s: %w", cluster, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Recorded the key of the cluster's agent", "cluster", cluster, "agentKey", key)
	return nil
}

// facts gathers what Decide needs to know about the hub for a request for
// cluster. The cluster is read from the API server: whether it was accepted
// and with which key must not lag behind the approval just made of another
// request.
func (r *Reconciler) facts(ctx context.Context, cluster string) (csr.Facts, error) {
	var facts csr.Facts
	mc := &clusterv1.ManagedCluster{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: cluster}, mc); client.IgnoreNotFound(err) != nil {
		return facts, fmt.Errorf("get ManagedCluster %s: %w", cluster, err)
	} else if err == nil {
		facts = csr.FactsOf(mc)
	}
	facts.AutoApproveUsers = slices.Clone(r.AutoApproveUsers)
	cm := &operatorv1.ClusterManager{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ClusterManagerName}, cm); client.IgnoreNotFound(err) != nil {
		return facts, fmt.Errorf("get ClusterManager %s: %w", r.ClusterManagerName, err)
	} else if err == nil && !r.IgnoreClusterManagerUsers {
		facts.AutoApproveUsers = append(facts.AutoApproveUsers, cm.Spec.RegistrationConfiguration.AutoApprovedIdentities()...)
	}
	return facts, nil
}

// mayRenew asks the authorizer whether the requester of csr may renew the
// client certificates of cluster.
func (r *Reconciler) mayRenew(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, cluster string) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(obj.Spec.Extra))
	for k, v := range obj.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: obj.Spec.Username, UID: obj.Spec.UID, Groups: obj.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: "register.open-cluster-management.io", Resource: "managedclusters",
			Subresource: "clientcertificates", Verb: "renew", Name: cluster,
		},
	}}
	if err := r.Client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("review whether %s may renew certificates of cluster %s: %w", obj.Spec.Username, cluster, err)
	}
	return sar.Status.Allowed, nil
}

// approve approves obj and records an event.
func (r *Reconciler) approve(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, action csr.Action, why string) error {
	if err := csr.ApproveRequest(ctx, r.Client, obj, ReasonAutoApproved, "Auto approving managed cluster agent certificate: "+why); err != nil {
		return err
	}
	reason := eventRenewal
	if action == csr.Approve {
		reason = eventAutoApproved
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Approved request", "requester", obj.Spec.Username, "reason", why)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, reason, "Approve", "approved: %s", why)
	return nil
}
