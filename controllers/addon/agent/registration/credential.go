package registration

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// reconcileCredential keeps a valid credential for reg in the add-on's
// Secret: it leaves a valid one alone until its rotation is due, and
// otherwise files (or waits for) a request and writes the issued
// certificate.
func (r *Reconciler) reconcileCredential(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, reg addonv1alpha1.RegistrationConfig) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	addon := mca.Name
	target := secretKey(mca)
	subject := certs.AddonSubject(r.Cluster, addon, reg.Subject)
	now := r.now()

	current, foreign, err := r.readSecret(ctx, target, addon)
	if err != nil {
		return ctrl.Result{}, err
	}
	if foreign != "" {
		return ctrl.Result{}, r.setRotated(ctx, mca, metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed, foreign)
	}
	var cert *x509.Certificate
	if current != nil {
		cert, err = r.validCredential(current, subject, now)
		if err != nil {
			log.Info("The add-on's hub credential is not usable; requesting a new one", "secret", target, "reason", err.Error())
		}
	}
	if cert != nil {
		rotateAt := certs.RotationTime(cert, certs.RotationFractionOf(cert))
		if now.Before(rotateAt) {
			if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnCertificateRotated); c == nil || c.Status != metav1.ConditionTrue {
				msg := fmt.Sprintf("The client certificate in Secret %s is valid until %s", target, cert.NotAfter.UTC().Format(time.RFC3339))
				if err := r.setRotated(ctx, mca, metav1.ConditionTrue, clusterv1.ReasonClientCertificateUpdated, msg); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{RequeueAfter: min(rotateAt.Sub(now), ResyncInterval)}, nil
		}
		log.Info("Rotating the add-on's hub credential", "secret", target, "certificateExpires", cert.NotAfter)
	}
	return r.request(ctx, mca, subject, target)
}

// secretKey names the hub credential Secret of mca:
// <addon>-hub-kubeconfig in its install namespace.
func secretKey(mca *addonv1alpha1.ManagedClusterAddOn) types.NamespacedName {
	return types.NamespacedName{Namespace: mca.AgentInstallNamespace(), Name: mca.Name + SecretSuffix}
}

// readSecret reads the add-on Secret target of addon: nil when there is
// none. When it exists and the agent did not write it, foreign says so,
// for a condition's message, and the caller must leave it alone.
func (r *Reconciler) readSecret(ctx context.Context, target types.NamespacedName, addon string) (s *corev1.Secret, foreign string, err error) {
	s = &corev1.Secret{}
	err = r.ManagedReader.Get(ctx, target, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("read Secret %s: %w", target, err)
	case !r.owns(s, addon):
		return nil, fmt.Sprintf("Secret %s exists and was not written by the agent (it lacks the labels %s=%s and %s=%s); delete it to let the agent write the add-on's hub credential",
			target, clusterv1.ClusterNameLabelKey, r.Cluster, addonv1alpha1.AddonLabelKey, addon), nil
	}
	return s, "", nil
}

// validCredential returns the certificate of the add-on Secret s when it is
// a usable credential of subject at now for the agent's hub.
func (r *Reconciler) validCredential(s *corev1.Secret, subject pkix.Name, now time.Time) (*x509.Certificate, error) {
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil {
		return nil, err
	}
	cert, err := cred.Validate(subject, now)
	if err != nil {
		return nil, err
	}
	if !kubeconfig.SameHub(cred.Kubeconfig, r.HubInfo) {
		return nil, fmt.Errorf("it points at %s, but the agent's hub is %s (or another CA or proxy)", cred.Kubeconfig.Server, r.HubInfo.Server)
	}
	return cert, nil
}

// request files, or waits for, the request of subject and writes the
// issued certificate to target.
func (r *Reconciler) request(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, subject pkix.Name, target types.NamespacedName) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	addon := mca.Name
	p, err := r.loadPending(ctx, addon)
	if err != nil {
		return ctrl.Result{}, err
	}
	st, created, err := certs.Request(ctx, r.HubDirect, p, subject, r.csrTemplate(addon))
	if err != nil {
		return ctrl.Result{}, err
	}
	if created {
		log.Info("Created CertificateSigningRequest for the add-on", "csr", st.Name, "user", subject.CommonName)
		if err := r.savePending(ctx, addon, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch st.Phase {
	case certs.RequestPending:
		return ctrl.Result{RequeueAfter: r.pollAfter(st.Name)}, nil
	case certs.RequestDenied:
		r.donePolling(st.Name)
		p.CSRName = ""
		if err := r.savePending(ctx, addon, p); err != nil {
			return ctrl.Result{}, err
		}
		log.Info("The add-on's CertificateSigningRequest was denied; a new one follows", "csr", st.Name, "reason", st.Message, "after", deniedRetryInterval)
		err := r.setRotated(ctx, mca, metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed,
			fmt.Sprintf("The hub denied CertificateSigningRequest %s (%s); a new request follows in %s", st.Name, st.Message, deniedRetryInterval))
		return ctrl.Result{RequeueAfter: deniedRetryInterval}, err
	}
	r.donePolling(st.Name)
	issued, err := certutil.ParseCertsPEM(st.CertPEM)
	if err != nil || certs.NeedsRotation(issued[0], r.now(), certs.RotationFractionOf(issued[0])) {
		// A request issued long ago (kept by an agent stopped before it
		// cleaned up): file a new one.
		log.Info("The add-on's issued CertificateSigningRequest is too old to use; filing a new one", "csr", st.Name)
		p.CSRName = ""
		return ctrl.Result{RequeueAfter: firstPollInterval}, r.savePending(ctx, addon, p)
	}
	expires := issued[0].NotAfter.UTC().Format(time.RFC3339)
	data, err := kubeconfig.AddonCredentialData(r.HubInfo, r.Cluster, addon, st.CertPEM, p.KeyPEM)
	if err == nil {
		err = r.writeSecret(ctx, r.Managed, r.ManagedReader, target, addon, data)
	}
	if err != nil {
		msg := fmt.Sprintf("Cannot write the client certificate of CertificateSigningRequest %s to Secret %s: %v", st.Name, target, err)
		return ctrl.Result{}, errors.Join(err, r.setRotated(ctx, mca, metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed, msg))
	}
	log.Info("Wrote the add-on's hub credential", "secret", target, "csr", st.Name, "certificateExpires", expires)
	if err := r.cleanup(ctx, addon, &target); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.setRotated(ctx, mca, metav1.ConditionTrue, clusterv1.ReasonClientCertificateUpdated,
		fmt.Sprintf("Client certificate rotated through CertificateSigningRequest %s; Secret %s is valid until %s", st.Name, target, expires)); err != nil {
		return ctrl.Result{}, err
	}
	// Come back to schedule the rotation of the new certificate.
	return ctrl.Result{RequeueAfter: firstPollInterval}, nil
}

// csrTemplate returns the request of addon without its PEM request: OCM's
// name and labels, the kube-apiserver-client signer and client usages.
func (r *Reconciler) csrTemplate(addon string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "addon-" + r.Cluster + "-" + addon + "-",
			Labels:       r.labels(addon),
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{
				certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
			},
		},
	}
}

// labels are the labels of the requests and Secrets of addon.
func (r *Reconciler) labels(addon string) map[string]string {
	return map[string]string{clusterv1.ClusterNameLabelKey: r.Cluster, addonv1alpha1.AddonLabelKey: addon}
}

// owns reports whether the agent wrote Secret s for addon.
func (r *Reconciler) owns(s *corev1.Secret, addon string) bool {
	return s.Labels[clusterv1.ClusterNameLabelKey] == r.Cluster && s.Labels[addonv1alpha1.AddonLabelKey] == addon
}

// pendingKey names the pending-request Secret of addon.
func (r *Reconciler) pendingKey(addon string) types.NamespacedName {
	return types.NamespacedName{Namespace: r.Namespace, Name: addon + PendingSecretSuffix}
}

// loadPending returns the pending request of addon, starting a new one with
// a new private key when there is none.
func (r *Reconciler) loadPending(ctx context.Context, addon string) (*certs.PendingRequest, error) {
	key := r.pendingKey(addon)
	s := &corev1.Secret{}
	switch err := r.AgentReader.Get(ctx, key, s); {
	case err == nil && r.owns(s, addon):
		if p := kubeconfig.ReadPendingRequest(s.Data, r.Cluster, addon); p != nil {
			return p, nil
		}
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read Secret %s: %w", key, err)
	}
	p, err := certs.NewPendingRequest()
	if err != nil {
		return nil, err
	}
	return p, r.savePending(ctx, addon, p)
}

// savePending writes the pending request p of addon.
func (r *Reconciler) savePending(ctx context.Context, addon string, p *certs.PendingRequest) error {
	return r.writeSecret(ctx, r.Agent, r.AgentReader, r.pendingKey(addon), addon, kubeconfig.PendingRequestData(r.Cluster, addon, p))
}

// writeSecret creates Secret key with data and the labels of addon, or
// replaces the data of the one the agent wrote. It never replaces a Secret
// the agent did not write.
func (r *Reconciler) writeSecret(ctx context.Context, w client.Client, rd client.Reader, key types.NamespacedName, addon string, data map[string][]byte) error {
	s := &corev1.Secret{}
	err := rd.Get(ctx, key, s)
	switch {
	case apierrors.IsNotFound(err):
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: r.labels(addon)},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if err := w.Create(ctx, s); err != nil {
			return fmt.Errorf("create Secret %s: %w", key, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read Secret %s: %w", key, err)
	case !r.owns(s, addon):
		return fmt.Errorf("secret %s exists and was not written by the agent", key)
	case maps.EqualFunc(s.Data, data, func(a, b []byte) bool { return string(a) == string(b) }):
		return nil
	}
	s.Data = data
	if err := w.Update(ctx, s); err != nil {
		return fmt.Errorf("update Secret %s: %w", key, err)
	}
	return nil
}

// cleanup deletes the Secrets the agent wrote for addon on the managed
// cluster, except keep, and its pending request.
func (r *Reconciler) cleanup(ctx context.Context, addon string, keep *types.NamespacedName) error {
	list := &corev1.SecretList{}
	if err := r.ManagedReader.List(ctx, list, client.MatchingLabels(r.labels(addon))); err != nil {
		return fmt.Errorf("list the Secrets of add-on %s: %w", addon, err)
	}
	pending := r.pendingKey(addon)
	for i := range list.Items {
		s := &list.Items[i]
		key := client.ObjectKeyFromObject(s)
		if (keep != nil && key == *keep) || key == pending {
			continue
		}
		if err := r.Managed.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete Secret %s: %w", key, err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleted the add-on's hub credential", "secret", key)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: pending.Namespace, Name: pending.Name}}
	if err := r.Agent.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Secret %s: %w", pending, err)
	}
	return nil
}

// addonsWithSecrets lists the add-ons the agent holds Secrets of: hub
// credentials on the managed cluster and pending requests.
func (r *Reconciler) addonsWithSecrets(ctx context.Context) ([]string, error) {
	sel := client.MatchingLabels{clusterv1.ClusterNameLabelKey: r.Cluster}
	has := client.HasLabels{addonv1alpha1.AddonLabelKey}
	managed, pending := &corev1.SecretList{}, &corev1.SecretList{}
	err := errors.Join(r.ManagedReader.List(ctx, managed, sel, has), r.AgentReader.List(ctx, pending, sel, has, client.InNamespace(r.Namespace)))
	seen := map[string]bool{}
	var out []string
	for _, s := range append(managed.Items, pending.Items...) {
		if a := s.Labels[addonv1alpha1.AddonLabelKey]; !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, err
}
