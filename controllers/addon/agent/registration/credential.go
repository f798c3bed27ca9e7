package registration

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	csrpolicy "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// reconcileCredential keeps a valid certificate for reg in its Secret: it
// leaves a valid one alone until its rotation is due, and otherwise files
// (or waits for) a request and writes the issued certificate. It returns
// what the ClusterCertificateRotated condition should say of reg, nil while
// a request is pending.
func (r *Reconciler) reconcileCredential(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, reg certRegistration) (ctrl.Result, *rotation, error) {
	log := ctrl.LoggerFrom(ctx)
	now := r.now()
	current, foreign, err := r.readSecret(ctx, mca, reg.target)
	if err != nil {
		return ctrl.Result{}, nil, err
	}
	if foreign != "" {
		return ctrl.Result{}, failed(foreign), nil
	}
	var cert *x509.Certificate
	if current != nil {
		cert, err = r.validCertificate(current, reg, now)
		if err != nil {
			log.Info("The add-on's credential is not usable; requesting a new one", "secret", reg.target, "signer", reg.signer, "reason", err.Error())
		}
	}
	if cert != nil {
		rotateAt := certs.RotationTime(cert, certs.RotationFractionOf(cert))
		if now.Before(rotateAt) {
			msg := fmt.Sprintf("The client certificate in Secret %s is valid until %s", reg.target, cert.NotAfter.UTC().Format(time.RFC3339))
			return ctrl.Result{RequeueAfter: min(rotateAt.Sub(now), ResyncInterval)}, &rotation{ok: true, message: msg}, nil
		}
		log.Info("Rotating the add-on's credential", "secret", reg.target, "signer", reg.signer, "certificateExpires", cert.NotAfter)
	}
	return r.request(ctx, mca, reg)
}

// secretKey names the hub credential Secret of mca:
// <addon>-hub-kubeconfig in its install namespace.
func secretKey(mca *addonv1alpha1.ManagedClusterAddOn) types.NamespacedName {
	return types.NamespacedName{Namespace: mca.AgentInstallNamespace(), Name: mca.Name + SecretSuffix}
}

// targetCluster returns the writer and reader of the cluster the
// credential Secrets of mca go to: the managed cluster, or for a hosted
// add-on (annotation addon.open-cluster-management.io/hosting-cluster-name)
// the cluster the agent runs on, the hosting cluster in Hosted mode, as in
// OCM. There the agent may write only in the namespaces the hub's hosting
// work grants it (controllers/addon/hub/template).
func (r *Reconciler) targetCluster(mca *addonv1alpha1.ManagedClusterAddOn) (client.Client, client.Reader) {
	if r.hostingNamespace(mca) != "" {
		return r.Agent, r.AgentReader
	}
	return r.Managed, r.ManagedReader
}

// hostingNamespace returns the install namespace of a hosted add-on on the
// hosting cluster when the agent runs there (Hosted mode); empty when mca
// is not hosted, or the agent runs on the managed cluster, where its
// Secrets go then.
func (r *Reconciler) hostingNamespace(mca *addonv1alpha1.ManagedClusterAddOn) string {
	if !r.Hosted || mca == nil || mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] == "" {
		return ""
	}
	return mca.AgentInstallNamespace()
}

// readSecret reads the add-on Secret target of mca: nil when there is
// none. When it exists and the agent did not write it, foreign says so,
// for a condition's message, and the caller must leave it alone.
func (r *Reconciler) readSecret(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, target types.NamespacedName) (s *corev1.Secret, foreign string, err error) {
	addon := mca.Name
	_, rd := r.targetCluster(mca)
	s = &corev1.Secret{}
	err = rd.Get(ctx, target, s)
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

// validCertificate returns the certificate of the add-on Secret s when it
// is a usable credential of reg at now: for the kube-apiserver-client
// signer, a hub credential of reg's subject for the agent's hub; for a
// custom signer, a certificate of reg's subject and its key.
func (r *Reconciler) validCertificate(s *corev1.Secret, reg certRegistration, now time.Time) (*x509.Certificate, error) {
	if reg.custom() {
		return certs.ValidateClientCertificate(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey], reg.subject, now)
	}
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil {
		return nil, err
	}
	cert, err := cred.Validate(reg.subject, now)
	if err != nil {
		return nil, err
	}
	if !kubeconfig.SameHub(cred.Kubeconfig, r.HubInfo) {
		return nil, fmt.Errorf("it points at %s, but the agent's hub is %s (or another CA or proxy)", cred.Kubeconfig.Server, r.HubInfo.Server)
	}
	return cert, nil
}

// request files, or waits for, the request of reg and writes the issued
// certificate to its Secret.
func (r *Reconciler) request(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, reg certRegistration) (ctrl.Result, *rotation, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("signer", reg.signer)
	addon := mca.Name
	p, err := r.loadPending(ctx, addon, reg.pending)
	if err != nil {
		return ctrl.Result{}, nil, err
	}
	st, created, err := certs.Request(ctx, r.HubDirect, p, reg.subject, r.csrTemplate(addon, reg.signer))
	if err != nil {
		return ctrl.Result{}, nil, err
	}
	if created {
		log.Info("Created CertificateSigningRequest for the add-on", "csr", st.Name, "user", reg.subject.CommonName)
		if err := r.savePending(ctx, addon, reg.pending, p); err != nil {
			return ctrl.Result{}, nil, err
		}
	}
	switch st.Phase {
	case certs.RequestPending:
		return ctrl.Result{RequeueAfter: r.pollAfter(st.Name)}, nil, nil
	case certs.RequestDenied:
		r.donePolling(st.Name)
		p.CSRName = ""
		if err := r.savePending(ctx, addon, reg.pending, p); err != nil {
			return ctrl.Result{}, nil, err
		}
		log.Info("The add-on's CertificateSigningRequest was denied; a new one follows", "csr", st.Name, "reason", st.Message, "after", deniedRetryInterval)
		return ctrl.Result{RequeueAfter: deniedRetryInterval},
			failed(fmt.Sprintf("The hub denied CertificateSigningRequest %s (%s); a new request follows in %s", st.Name, st.Message, deniedRetryInterval)), nil
	}
	r.donePolling(st.Name)
	issued, err := certutil.ParseCertsPEM(st.CertPEM)
	if err != nil || certs.NeedsRotation(issued[0], r.now(), certs.RotationFractionOf(issued[0])) {
		// A request issued long ago (kept by an agent stopped before it
		// cleaned up): file a new one.
		log.Info("The add-on's issued CertificateSigningRequest is too old to use; filing a new one", "csr", st.Name)
		p.CSRName = ""
		return ctrl.Result{RequeueAfter: firstPollInterval}, nil, r.savePending(ctx, addon, reg.pending, p)
	}
	expires := issued[0].NotAfter.UTC().Format(time.RFC3339)
	data, err := r.credentialData(addon, reg, st.CertPEM, p.KeyPEM)
	if err == nil {
		w, rd := r.targetCluster(mca)
		err = r.writeSecret(ctx, w, rd, reg.target, addon, data)
	}
	if err != nil {
		msg := fmt.Sprintf("Cannot write the client certificate of CertificateSigningRequest %s to Secret %s: %v", st.Name, reg.target, err)
		return ctrl.Result{}, failed(msg), err
	}
	log.Info("Wrote the add-on's credential", "secret", reg.target, "csr", st.Name, "certificateExpires", expires)
	if err := r.deletePending(ctx, reg.pending); err != nil {
		return ctrl.Result{}, nil, err
	}
	// Come back to schedule the rotation of the new certificate.
	return ctrl.Result{RequeueAfter: firstPollInterval}, &rotation{ok: true, wrote: true,
		message: fmt.Sprintf("Client certificate rotated through CertificateSigningRequest %s; Secret %s is valid until %s", st.Name, reg.target, expires)}, nil
}

// csrTemplate returns the request of addon to signer without its PEM
// request: OCM's name and labels and client usages.
func (r *Reconciler) csrTemplate(addon, signer string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "addon-" + r.Cluster + "-" + addon + "-",
			Labels:       r.labels(addon),
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: signer,
			Usages:     csrpolicy.AgentUsages(),
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

// loadPending returns the pending request of addon kept in Secret key,
// starting a new one with a new private key when there is none.
func (r *Reconciler) loadPending(ctx context.Context, addon string, key types.NamespacedName) (*certs.PendingRequest, error) {
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
	return p, r.savePending(ctx, addon, key, p)
}

// savePending writes the pending request p of addon to Secret key.
func (r *Reconciler) savePending(ctx context.Context, addon string, key types.NamespacedName, p *certs.PendingRequest) error {
	return r.writeSecret(ctx, r.Agent, r.AgentReader, key, addon, kubeconfig.PendingRequestData(r.Cluster, addon, p))
}

// deletePending deletes the pending-request Secret key.
func (r *Reconciler) deletePending(ctx context.Context, key types.NamespacedName) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := r.Agent.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Secret %s: %w", key, err)
	}
	return nil
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

// cleanup deletes the Secrets the agent wrote for addon, on the managed
// cluster, in hosting (the install namespace of a hosted add-on on the
// cluster the agent runs on, when not empty) and its pending requests,
// except those in keep, which are on the hosting cluster when hosting is
// set: all of the add-on's Secrets on the managed cluster go then. The
// credential of a hosted add-on that is gone is left to its install
// namespace's removal with the hosting work: the agent may not list
// Secrets in every namespace of the hosting cluster.
func (r *Reconciler) cleanup(ctx context.Context, addon, hosting string, keep ...types.NamespacedName) error {
	managed, hosted, pending := &corev1.SecretList{}, &corev1.SecretList{}, &corev1.SecretList{}
	if err := r.ManagedReader.List(ctx, managed, client.MatchingLabels(r.labels(addon))); err != nil {
		return fmt.Errorf("list the Secrets of add-on %s: %w", addon, err)
	}
	if hosting != "" && hosting != r.Namespace {
		if err := r.AgentReader.List(ctx, hosted, client.MatchingLabels(r.labels(addon)), client.InNamespace(hosting)); err != nil {
			return fmt.Errorf("list the Secrets of hosted add-on %s in namespace %s: %w", addon, hosting, err)
		}
	}
	if err := r.AgentReader.List(ctx, pending, client.MatchingLabels(r.labels(addon)), client.InNamespace(r.Namespace)); err != nil {
		return fmt.Errorf("list the pending requests of add-on %s: %w", addon, err)
	}
	managedKeep := keep
	if hosting != "" {
		managedKeep = nil
	}
	for _, list := range []struct {
		items   []corev1.Secret
		pending bool
		c       client.Client
		keep    []types.NamespacedName
	}{{managed.Items, false, r.Managed, managedKeep}, {hosted.Items, false, r.Agent, keep}, {pending.Items, true, r.Agent, keep}} {
		for i := range list.items {
			s := &list.items[i]
			key := client.ObjectKeyFromObject(s)
			if slices.Contains(list.keep, key) || r.isPending(s) != list.pending {
				continue
			}
			if err := list.c.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete Secret %s: %w", key, err)
			}
			if !list.pending {
				ctrl.LoggerFrom(ctx).Info("Deleted the add-on's credential", "secret", key)
			}
		}
	}
	return nil
}

// isPending reports whether s is a pending-request Secret: in the agent's
// namespace, named <credential Secret>-pending.
func (r *Reconciler) isPending(s *corev1.Secret) bool {
	return s.Namespace == r.Namespace && strings.HasSuffix(s.Name, pendingSuffix)
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
