package agent

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	csrpolicy "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// newCSR returns the certificate signing request of id for the PEM request
// data (nil for a template that certs.Request completes), to signer.
func newCSR(id identity, request []byte, signer string, expirationSeconds int32) *certificatesv1.CertificateSigningRequest {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: id.cluster + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabelKey: id.cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: signer,
			Usages:     csrpolicy.AgentUsages(),
		},
	}
	if expirationSeconds > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(expirationSeconds)
	}
	return csr
}

// requestCertificate makes sure the hub has a certificate signing request of
// id for the pending key (for a token with the token driver) and returns its
// state (certs.Request: the request
// named in p is reused while it fits; a new one is recorded in p, which the
// caller persists).
func (a *Agent) requestCertificate(ctx context.Context, hub client.Client, id identity, p *certs.PendingRequest) (certs.RequestState, bool, error) {
	st, created, err := certs.Request(ctx, hub, p, id.subject(), newCSR(id, nil, a.signer(), a.opts.ClientCertExpirationSeconds))
	if created {
		ctrl.LoggerFrom(ctx).Info("Created CertificateSigningRequest", "csr", st.Name)
	}
	return st, created, err
}

// signer is the signer of the agent's requests: the hub's client
// certificate signer, or with the token driver the signer the hub answers
// with a sealed token.
func (a *Agent) signer() string {
	if a.opts.tokenAuth() {
		return certs.AgentTokenSignerName
	}
	return certificatesv1.KubeAPIServerClientSignerName
}
