package signer

import (
	"context"
	"fmt"
	"time"

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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// Events of the signer.
const (
	eventSigned    = "AddonCSRSigned"
	eventNotSigned = "AddonCSRNotSigned"
)

// retryInterval is the wait before a request whose CA cannot be used yet is
// tried again: the signingCA Secret is not watched.
const retryInterval = 30 * time.Second

// Reconciler signs approved add-on requests of custom signers.
type Reconciler struct {
	// Client reads requests, add-ons, clusters and templates from the
	// manager's cache and writes the requests' status.
	Client client.Client
	// Secrets reads the signingCA Secrets, around any cache.
	Secrets client.Reader
	// Namespace is the hub controller's namespace, where a signingCA
	// without a namespace is.
	Namespace string
	// Recorder records events on the requests.
	Recorder events.EventRecorder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// The signer writes status.certificate of requests of any custom signer,
// whose names only the AddOnTemplates know, so the sign rule names no
// signer (as OCM's add-on manager has it); the reconciler itself never
// signs a kubernetes.io/ signer. It reads signingCA Secrets in its own
// namespace; a signingCA elsewhere needs a RoleBinding granting it get on
// that Secret.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/status,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,verbs=sign
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons;addontemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get

// SetupWithManager registers the reconciler. Approved, unsigned requests
// are reconsidered when their ManagedClusterAddOn changes its registrations
// or configurations.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Secrets == nil {
		r.Secrets = mgr.GetAPIReader()
	}
	if err := csr.IndexByCluster(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-signer").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return needsSigning(obj.(*certificatesv1.CertificateSigningRequest))
		}))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(r.unsignedRequests),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				o, n := e.ObjectOld.(*addonv1alpha1.ManagedClusterAddOn), e.ObjectNew.(*addonv1alpha1.ManagedClusterAddOn)
				return !equality.Semantic.DeepEqual(o.Status.Registrations, n.Status.Registrations) ||
					!equality.Semantic.DeepEqual(o.Status.ConfigReferences, n.Status.ConfigReferences)
			}})).
		Complete(r)
}

// needsSigning reports whether obj is an add-on request of a custom signer
// that was approved, neither denied nor failed, and carries no certificate.
func needsSigning(obj *certificatesv1.CertificateSigningRequest) bool {
	if !csr.IsAddonRequest(obj) || !registration.IsCustomSigner(obj.Spec.SignerName) || len(obj.Status.Certificate) > 0 {
		return false
	}
	st := certs.StateOf(obj)
	return st.Approved && st.Refusal == nil
}

// unsignedRequests maps a ManagedClusterAddOn to its requests that need
// signing.
func (r *Reconciler) unsignedRequests(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := r.Client.List(ctx, list, csr.OfCluster(obj.GetNamespace()), client.MatchingLabels{addonv1alpha1.AddonLabelKey: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List CertificateSigningRequests")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if needsSigning(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Reconcile signs one approved request when the rule still accepts it and
// its CA can be read.
func (r *Reconciler) Reconcile(ctx context.Context, key ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, key.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !needsSigning(obj) {
		return ctrl.Result{}, nil
	}
	req, err := csr.ParseRequest(obj)
	if err != nil {
		r.notSigned(ctx, obj, err.Error())
		return ctrl.Result{}, nil
	}
	facts, signer, err := lookup.AddonRequestFacts(ctx, r.Client, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ok, why := csr.DecideAddon(req, facts); !ok || signer == nil {
		// A change of the add-on brings it back.
		r.notSigned(ctx, obj, why)
		return ctrl.Result{}, nil
	}
	ca, err := r.signingCA(ctx, signer)
	if err != nil {
		r.notSigned(ctx, obj, err.Error())
		return ctrl.Result{RequeueAfter: retryInterval}, nil
	}
	certPEM, err := ca.IssueClientCertificate(obj.Spec.Request, obj.Spec.Usages, lifetime(obj), r.now())
	if err != nil {
		r.notSigned(ctx, obj, fmt.Sprintf("the CA of Secret %s cannot sign it: %v", r.secretKey(signer), err))
		return ctrl.Result{RequeueAfter: retryInterval}, nil
	}
	signed := obj.DeepCopy()
	signed.Status.Certificate = certPEM
	if err := r.Client.Status().Update(ctx, signed); err != nil {
		return ctrl.Result{}, fmt.Errorf("write the certificate of CertificateSigningRequest %s: %w", obj.Name, err)
	}
	log.V(2).Info("Signed add-on request", "cluster", req.Cluster, "addon", req.Addon, "signer", req.SignerName, "signingCA", r.secretKey(signer))
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventSigned, "Sign", "signed by %s with the CA of Secret %s", req.SignerName, r.secretKey(signer))
	return ctrl.Result{}, nil
}

// notSigned logs and records why obj is left unsigned.
func (r *Reconciler) notSigned(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, why string) {
	ctrl.LoggerFrom(ctx).V(2).Info("Leaving approved add-on request unsigned", "signer", obj.Spec.SignerName, "reason", why)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventNotSigned, "Sign", "not signed: %s", why)
}

// secretKey names the signingCA Secret of signer.
func (r *Reconciler) secretKey(signer *addonv1alpha1.CustomSignerRegistrationConfig) client.ObjectKey {
	ns := signer.SigningCA.Namespace
	if ns == "" {
		ns = r.Namespace
	}
	return client.ObjectKey{Namespace: ns, Name: signer.SigningCA.Name}
}

// signingCA reads the CA of signer from its signingCA Secret.
func (r *Reconciler) signingCA(ctx context.Context, signer *addonv1alpha1.CustomSignerRegistrationConfig) (*certs.CA, error) {
	key := r.secretKey(signer)
	if key.Namespace == "" {
		return nil, fmt.Errorf("signingCA %s names no namespace and the hub controller's own is unknown: set signingCA.namespace, or run the hub controller with --namespace", key.Name)
	}
	s := &corev1.Secret{}
	if err := r.Secrets.Get(ctx, key, s); err != nil {
		return nil, fmt.Errorf("read signingCA Secret %s: %w (create it as a kubernetes.io/tls Secret with the CA's tls.crt and tls.key; outside namespace %s, also grant the hub controller get on it)",
			key, err, r.Namespace)
	}
	ca, err := certs.ParseCA(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("signingCA Secret %s: %w", key, err)
	}
	return ca, nil
}

// lifetime is the lifetime of the certificate of obj: the default, or the
// shorter spec.expirationSeconds (at least certs.MinIssuedLifetime).
func lifetime(obj *certificatesv1.CertificateSigningRequest) time.Duration {
	if obj.Spec.ExpirationSeconds == nil {
		return certs.DefaultIssuedLifetime
	}
	d := time.Duration(*obj.Spec.ExpirationSeconds) * time.Second
	return min(max(d, certs.MinIssuedLifetime), certs.DefaultIssuedLifetime)
}

// now reads the clock.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
