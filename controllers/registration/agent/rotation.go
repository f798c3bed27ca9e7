package agent

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// rotateIfDue renews the client certificate of conn once less than its random
// rotation fraction of its lifetime remains. The renewal request carries the
// same identity and is made with the current certificate, so the hub approves
// it by itself; the new credential is written to the hub kubeconfig Secret,
// which runConnected then switches to. The old credential stays in use until
// then, so the cluster stays available.
func (a *Agent) rotateIfDue(ctx context.Context, id identity, conn *hubConnection) {
	if conn.cred.token != nil {
		a.refreshTokenIfDue(ctx, id, conn)
		return
	}
	cert := conn.cred.cert
	signers := a.announcedSigners(ctx, id)
	if !certs.NeedsRotation(cert, a.now(), conn.rotationFraction) && !a.signerChanged(cert, signers) {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("phase", "rotation", "certificateExpires", cert.NotAfter)
	ctx = ctrl.LoggerInto(ctx, log)
	p, err := a.loadPending(ctx, id)
	if err != nil {
		log.Error(err, "Cannot load or create the private key for the renewal")
		return
	}
	res, created, err := a.requestCertificate(ctx, conn.client, id, p)
	conn.noteError(err)
	if err != nil {
		a.setRotation(metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed,
			fmt.Sprintf("Cannot request a renewed client certificate: %v", err))
		log.Error(err, "Cannot request a renewed client certificate")
		return
	}
	if created {
		log.Info("Certificate rotation started", "csr", res.Name)
		if err := a.savePending(ctx, id, p); err != nil {
			log.Error(err, "Cannot record the pending CertificateSigningRequest")
		}
	}
	switch res.Phase {
	case certs.RequestPending:
		return
	case certs.RequestDenied:
		a.setRotation(metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed,
			fmt.Sprintf("The hub denied the renewal request %s: %s", res.Name, res.Message))
		p.CSRName = ""
		if err := a.savePending(ctx, id, p); err != nil {
			log.Error(err, "Cannot record the pending CertificateSigningRequest")
		}
		return
	}
	bootstrap, err := a.bootstrapKubeconfig(ctx)
	if err != nil {
		// Without the bootstrap kubeconfig, keep the hub the current credential points at.
		bootstrap = conn.cred.hub
	}
	data, err := hubSecretData(id, bootstrap, res.CertPEM, p.KeyPEM)
	if err == nil {
		err = a.writeSecret(ctx, a.opts.HubKubeconfigSecret, data)
	}
	if err != nil {
		a.setRotation(metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed,
			fmt.Sprintf("Cannot store the renewed client certificate: %v", err))
		log.Error(err, "Cannot store the renewed client certificate")
		return
	}
	if err := a.deleteSecret(ctx, a.opts.pendingSecretName()); err != nil {
		log.Error(err, "Cannot delete the pending-request Secret")
	}
	expires := "unknown"
	if issued, err := certutil.ParseCertsPEM(res.CertPEM); err == nil {
		expires = issued[0].NotAfter.UTC().Format(time.RFC3339)
		if len(signers) > 0 && !certs.SignedByAny(issued[0], signers) {
			// The hub announced a signer it does not sign with yet: ask
			// again later, not at every check.
			a.mu.Lock()
			a.signerRetry = a.now().Add(signerRetryInterval)
			a.mu.Unlock()
			log.Info("The hub announced a new client-signing CA (annotation "+certs.ClientSignerAnnotation+") but issued a certificate of another CA; requesting again later",
				"csr", res.Name, "retryAt", a.now().Add(signerRetryInterval))
		}
	}
	log.Info("Client certificate rotated", "csr", res.Name, "newCertificateExpires", expires)
	a.setRotation(metav1.ConditionTrue, clusterv1.ReasonClientCertificateUpdated,
		fmt.Sprintf("Client certificate rotated through CertificateSigningRequest %s; valid until %s", res.Name, expires))
}

// setRotation records the outcome of a rotation for the next status sync.
func (a *Agent) setRotation(status metav1.ConditionStatus, reason, message string) {
	a.mu.Lock()
	a.rotation = &metav1.Condition{
		Type: clusterv1.ManagedClusterConditionCertificateRotated, Status: status, Reason: reason, Message: message,
	}
	a.mu.Unlock()
	a.trigger()
}

// refreshTokenIfDue replaces the token of conn once kubeconfig.
// TokenRefreshFraction of its lifetime has passed: it asks the hub's
// TokenRequest API, with the current token, for a new token of the cluster's
// agent ServiceAccount with the same lifetime, and writes it to the hub
// kubeconfig Secret, which runConnected then switches to. The bootstrap
// credential plays no part. A failure is retried at the next check; once the
// token expires or the hub rejects it the agent bootstraps again.
func (a *Agent) refreshTokenIfDue(ctx context.Context, id identity, conn *hubConnection) {
	t := conn.cred.token
	if a.now().Before(t.RefreshTime()) {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("phase", "token refresh", "tokenExpires", t.Expiry)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(max(t.Expiry.Sub(t.IssuedAt), certs.MinTokenLifetime) / time.Second)),
	}}
	err := conn.client.SubResource("token").Create(ctx, sa, tr)
	conn.noteError(err)
	if err != nil {
		log.Error(err, "Cannot refresh the hub token; retrying", "serviceAccount", t.Namespace+"/"+t.Name)
		return
	}
	data, err := hubTokenSecretData(id, conn.cred.hub, []byte(tr.Status.Token))
	if err == nil {
		err = a.writeSecret(ctx, a.opts.HubKubeconfigSecret, data)
	}
	if err != nil {
		log.Error(err, "Cannot store the refreshed hub token; retrying")
		return
	}
	log.Info("Hub token refreshed", "newTokenExpires", tr.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
}

// signerRetryInterval is how long an agent waits before it requests a
// certificate of an announced signing CA again, when the hub issued its last
// request with another CA.
const signerRetryInterval = 10 * time.Minute

// announcedSigners returns the CAs the hub announces it signs client
// certificates with (certs.ClientSignerAnnotation on the ManagedCluster),
// as the hub watch last delivered it: nil for none, before the watch synced,
// or for an announcement that does not parse, which is logged.
func (a *Agent) announcedSigners(ctx context.Context, id identity) []*x509.Certificate {
	mc := a.cachedCluster(id)
	if mc == nil || mc.Annotations[certs.ClientSignerAnnotation] == "" {
		return nil
	}
	cas, err := certs.ParseCertificates([]byte(mc.Annotations[certs.ClientSignerAnnotation]))
	if err != nil {
		a.mu.Lock()
		logged := a.badSignerAnnotation == mc.Annotations[certs.ClientSignerAnnotation]
		a.badSignerAnnotation = mc.Annotations[certs.ClientSignerAnnotation]
		a.mu.Unlock()
		if !logged {
			ctrl.LoggerFrom(ctx).Error(err, "Ignoring the hub's announced client-signing CA", "annotation", certs.ClientSignerAnnotation)
		}
		return nil
	}
	return cas
}

// signerChanged reports whether the hub announced client-signing CAs none of
// which signed cert, so that the agent requests a certificate of the new CA
// before the hub stops accepting the old one; not again within
// signerRetryInterval of a request the hub issued with another CA.
func (a *Agent) signerChanged(cert *x509.Certificate, signers []*x509.Certificate) bool {
	if len(signers) == 0 || certs.SignedByAny(cert, signers) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.now().Before(a.signerRetry)
}
