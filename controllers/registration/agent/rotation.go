package agent

import (
	"context"
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
	if !certs.NeedsRotation(cert, a.now(), conn.rotationFraction) {
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
