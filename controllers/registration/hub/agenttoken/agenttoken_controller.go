// Package agenttoken is the hub's half of the token registration driver: it
// answers each approved request of signer certs.AgentTokenSignerName with a
// token of the cluster's token identity (ServiceAccount
// identity.AgentTokenServiceAccount in identity.AgentTokenNamespace, a
// namespace only the hub controller administers), sealed to the request's
// key (certs.SealToken). No certificate is signed, so clusters join hubs
// that sign no client certificates.
//
// Creating the ServiceAccount is what makes a cluster a token-driver
// cluster: the managedcluster controller then names it in the cluster's
// grants, and the token is issued once they do (managedcluster.TokenGranted).
// The agent refreshes the token itself through the TokenRequest API;
// deleting the ServiceAccount revokes every token of it, which the hub does
// when a cluster is no longer accepted.
package agenttoken

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managedcluster"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// Reasons of the events and of the Failed condition.
const (
	eventIssued  = "AgentTokenIssued"
	reasonFailed = "AgentTokenRefused"
)

// Reconciler issues the sealed tokens.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on the requests.
	Recorder events.EventRecorder
}

// The requests are read from the cache and annotated (update); refused ones
// are failed through the status subresource. The ServiceAccount is created
// when missing and its token requested; the hub controller holds the
// ServiceAccount rights for the add-on token driver too.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/status,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubectl-ocm.io/agent-token,verbs=sign
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// SetupWithManager registers the reconciler: requests of the token signer,
// and again when their cluster changes (it may be accepted after its
// request was approved) or its grants do (they name its token identity once
// the ServiceAccount exists).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := csr.IndexByCluster(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("agenttoken").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName == certs.AgentTokenSignerName
		}))).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return r.requestsOf(ctx, obj.GetName())
		})).
		Watches(&rbacv1.ClusterRoleBinding{}, handler.EnqueueRequestsFromMapFunc(r.requestsOfLabeled)).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(r.requestsOfLabeled)).
		Complete(r)
}

// requestsOfLabeled returns the approved, unanswered token requests of the
// cluster obj is labeled with.
func (r *Reconciler) requestsOfLabeled(ctx context.Context, obj client.Object) []reconcile.Request {
	if cluster := obj.GetLabels()[clusterv1.ClusterNameLabelKey]; cluster != "" {
		return r.requestsOf(ctx, cluster)
	}
	return nil
}

// requestsOf returns the approved, unanswered token requests of cluster.
func (r *Reconciler) requestsOf(ctx context.Context, cluster string) []reconcile.Request {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := r.Client.List(ctx, list, csr.OfCluster(cluster)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List CertificateSigningRequests", "cluster", cluster)
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if obj := &list.Items[i]; pending(obj) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return out
}

// pending reports whether obj is a token request that is approved and
// neither answered nor failed.
func pending(obj *certificatesv1.CertificateSigningRequest) bool {
	if obj.Spec.SignerName != certs.AgentTokenSignerName || obj.Annotations[certs.SealedTokenAnnotation] != "" {
		return false
	}
	st := certs.StateOf(obj)
	return st.Phase == certs.RequestPending && st.Approved
}

// Reconcile answers one approved token request: it checks the request
// again by the approval policy (an administrator may have approved a
// request the policy refuses), waits until its cluster is accepted, then
// creates the cluster's token identity if missing, waits until the
// cluster's grants name it, requests a token of it and stores the token
// sealed to the request's key.
func (r *Reconciler) Reconcile(ctx context.Context, key ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, key.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pending(obj) {
		return ctrl.Result{}, nil
	}
	req, err := csr.ParseRequest(obj)
	if err == nil && csr.IsAddonRequest(obj) {
		err = fmt.Errorf("it is labeled as an add-on's request; signer %s serves cluster agents only", certs.AgentTokenSignerName)
	}
	if err == nil {
		err = csr.Validate(req)
	}
	if err == nil {
		err = csr.CheckRequester(req)
	}
	if err != nil {
		return ctrl.Result{}, r.fail(ctx, obj, err.Error())
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: req.Cluster}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			log.V(2).Info("Waiting for the cluster of an approved token request", "cluster", req.Cluster)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !cluster.Spec.HubAcceptsClient || !cluster.IsAccepted() || !cluster.DeletionTimestamp.IsZero() {
		// The ManagedCluster watch brings the request back once the
		// cluster is accepted and its namespace exists.
		log.V(2).Info("Waiting until the cluster of an approved token request is accepted", "cluster", req.Cluster)
		return ctrl.Result{}, nil
	}
	sa, err := r.ensureIdentity(ctx, req.Cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if granted, err := managedcluster.TokenGranted(ctx, r.Client, req.Cluster); err != nil || !granted {
		// The RoleBinding watches bring the request back once the
		// managedcluster controller has named the identity in them.
		log.V(2).Info("Waiting until the grants of the cluster name its token identity", "cluster", req.Cluster)
		return ctrl.Result{}, err
	}
	token, err := r.issue(ctx, sa, certs.AgentTokenLifetime(obj.Spec.ExpirationSeconds))
	if err != nil {
		return ctrl.Result{}, err
	}
	sealed, err := certs.SealToken(obj, token)
	if err != nil {
		return ctrl.Result{}, r.fail(ctx, obj, err.Error())
	}
	answered := obj.DeepCopy()
	if answered.Annotations == nil {
		answered.Annotations = map[string]string{}
	}
	answered.Annotations[certs.SealedTokenAnnotation] = sealed
	if err := r.Client.Update(ctx, answered); err != nil {
		return ctrl.Result{}, fmt.Errorf("store the sealed token on CertificateSigningRequest %s: %w", obj.Name, err)
	}
	log.V(2).Info("Issued the agent token", "cluster", req.Cluster, "csr", obj.Name)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventIssued, "Issue",
		"issued a token of ServiceAccount %s/%s, sealed to the request's key", sa.Namespace, sa.Name)
	return ctrl.Result{}, nil
}

// ensureIdentity creates the token identity of cluster, ServiceAccount
// identity.AgentTokenServiceAccount in identity.AgentTokenNamespace labeled
// with the cluster name, when the cache does not hold it, and returns it.
func (r *Reconciler) ensureIdentity(ctx context.Context, cluster string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(cluster),
		Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster},
	}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{})
	if apierrors.IsNotFound(err) {
		err = r.Client.Create(ctx, sa)
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return sa, nil
}

// issue returns a new token of sa, valid for d.
func (r *Reconciler) issue(ctx context.Context, sa *corev1.ServiceAccount, d time.Duration) ([]byte, error) {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d / time.Second))}}
	if err := r.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("request a token of ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return []byte(tr.Status.Token), nil
}

// fail marks obj Failed with why, which the agent reads as a refusal; it
// then files a new request.
func (r *Reconciler) fail(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, why string) error {
	failed := obj.DeepCopy()
	failed.Status.Conditions = append(failed.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: reasonFailed,
		Message: "No token issued: " + why, LastUpdateTime: metav1.Now(),
	})
	if err := r.Client.Status().Update(ctx, failed); err != nil {
		return fmt.Errorf("fail CertificateSigningRequest %s: %w", obj.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Refused a token request", "csr", obj.Name, "reason", why)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonFailed, "Issue", "no token issued: %s", why)
	return nil
}
