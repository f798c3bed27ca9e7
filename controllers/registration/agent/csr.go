package agent

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// csrPhase is where a certificate signing request stands.
type csrPhase int

const (
	csrPending csrPhase = iota
	csrIssued
	csrDenied
)

// csrResult is the state of the agent's certificate signing request.
type csrResult struct {
	name  string
	phase csrPhase
	// certPEM is the issued certificate.
	certPEM []byte
	// message explains a denial or failure.
	message string
}

// newCSR returns the certificate signing request of id for key.
func newCSR(id identity, key []byte, expirationSeconds int32) *certificatesv1.CertificateSigningRequest {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: id.cluster + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabelKey: id.cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    key,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{
				certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
			},
		},
	}
	if expirationSeconds > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(expirationSeconds)
	}
	return csr
}

// requestCertificate makes sure the hub has a certificate signing request of
// id for the pending key and returns its state. It reuses the request named
// in p when it still exists, was made with p's key and was not denied or
// failed; otherwise it creates a new one and records its name in p (the
// caller persists p).
func (a *Agent) requestCertificate(ctx context.Context, hub client.Client, id identity, p *pendingRequest) (res csrResult, created bool, err error) {
	if p.csrName != "" {
		csr := &certificatesv1.CertificateSigningRequest{}
		err := hub.Get(ctx, types.NamespacedName{Name: p.csrName}, csr)
		switch {
		case err == nil && certs.CSRMatches(csr.Spec.Request, p.key, id.subject()):
			if res := csrState(csr); res.phase != csrDenied {
				return res, false, nil
			}
		case apierrors.IsForbidden(err):
			// The hub lets a cluster's agent read only its own requests, and
			// grants that a moment after the request is created: wait.
			return csrResult{name: p.csrName, phase: csrPending}, false, nil
		case err != nil && !apierrors.IsNotFound(err):
			return csrResult{}, false, fmt.Errorf("read CertificateSigningRequest %s on the hub: %w", p.csrName, err)
		}
	}
	subject := id.subject()
	request, err := certutil.MakeCSR(p.key, &subject, nil, nil)
	if err != nil {
		return csrResult{}, false, fmt.Errorf("create a certificate request for %s: %w", subject.CommonName, err)
	}
	csr := newCSR(id, request, a.opts.ClientCertExpirationSeconds)
	if err := hub.Create(ctx, csr); err != nil {
		return csrResult{}, false, fmt.Errorf("create a CertificateSigningRequest on the hub: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Created CertificateSigningRequest", "csr", csr.Name)
	p.csrName = csr.Name
	return csrState(csr), true, nil
}

// csrState reads the phase of csr from its conditions and certificate.
func csrState(csr *certificatesv1.CertificateSigningRequest) csrResult {
	res := csrResult{name: csr.Name, phase: csrPending}
	approved := false
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			res.phase, res.message = csrDenied, fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message)
			return res
		case certificatesv1.CertificateApproved:
			approved = true
		}
	}
	if approved && len(csr.Status.Certificate) > 0 {
		res.phase, res.certPEM = csrIssued, csr.Status.Certificate
	}
	return res
}
