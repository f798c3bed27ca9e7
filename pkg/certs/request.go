package certs

import (
	"context"
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PendingRequest is the private key of a client certificate an agent waits
// for and, once filed, the name of the CertificateSigningRequest made with
// it. Agents keep it in a Secret (kubeconfig.PendingRequestData) so that a
// restarted agent waits for the same request instead of filing another.
type PendingRequest struct {
	// KeyPEM is the PEM private key; Key is the same key, parsed.
	KeyPEM []byte
	Key    crypto.Signer
	// CSRName names the request on the hub; empty before it is filed.
	CSRName string
}

// NewPendingRequest returns a pending request with a new private key
// (NewPrivateKey) and no request filed yet.
func NewPendingRequest() (*PendingRequest, error) {
	key, keyPEM, err := NewPrivateKey()
	if err != nil {
		return nil, err
	}
	return &PendingRequest{KeyPEM: keyPEM, Key: key}, nil
}

// RequestPhase is where a certificate signing request stands.
type RequestPhase int

const (
	// RequestPending is neither issued nor refused yet.
	RequestPending RequestPhase = iota
	// RequestIssued was approved and carries its certificate.
	RequestIssued
	// RequestDenied was denied, or the signer failed it.
	RequestDenied
)

// RequestState is what an agent needs to know of its certificate signing
// request.
type RequestState struct {
	// Name is the request's name.
	Name string
	// Phase is where it stands.
	Phase RequestPhase
	// UID is the request's UID.
	UID types.UID
	// CertPEM is the issued certificate (Phase RequestIssued) of a
	// certificate request.
	CertPEM []byte
	// SealedToken is the sealed token (Phase RequestIssued) of a request
	// of AgentTokenSignerName; OpenToken opens it.
	SealedToken string
	// Message explains a denial or failure (Phase RequestDenied).
	Message string
	// Refusal is the Denied or Failed condition of a RequestDenied request.
	Refusal *certificatesv1.CertificateSigningRequestCondition
	// Approved says the request was approved, last at ApprovedAt. An
	// approved request stays RequestPending until it is issued, and becomes
	// RequestDenied if its signer fails it.
	Approved   bool
	ApprovedAt time.Time
}

// Decided reports whether someone approved, denied or failed the request:
// nothing is left for an approver to do.
func (st RequestState) Decided() bool { return st.Approved || st.Refusal != nil }

// StateOf reads the state of csr from its conditions and certificate. It is
// the one reading of a request's conditions: only a condition whose status
// is True counts, as for kube-controller-manager's signers. A Denied or
// Failed condition makes it RequestDenied (the first one found names the
// refusal); else it is RequestIssued once approved with a certificate (or,
// for AgentTokenSignerName, a sealed token); else RequestPending.
func StateOf(csr *certificatesv1.CertificateSigningRequest) RequestState {
	st := RequestState{Name: csr.Name, UID: csr.UID, Phase: RequestPending}
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			if st.Refusal == nil {
				st.Refusal = &c // a copy: c is this iteration's own
			}
		case certificatesv1.CertificateApproved:
			st.Approved, st.ApprovedAt = true, c.LastUpdateTime.Time
		}
	}
	switch {
	case st.Refusal != nil:
		c := st.Refusal
		st.Phase, st.Message = RequestDenied, fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message)
	case !st.Approved:
	case csr.Spec.SignerName == AgentTokenSignerName:
		if sealed := csr.Annotations[SealedTokenAnnotation]; sealed != "" {
			st.Phase, st.SealedToken = RequestIssued, sealed
		}
	case len(csr.Status.Certificate) > 0:
		st.Phase, st.CertPEM = RequestIssued, csr.Status.Certificate
	}
	return st
}

// Request makes sure the hub c holds a certificate signing request for
// subject made with p's key, and returns its state. It reuses the request p
// names when it still exists, was made with p's key for subject and the
// template's signer and was not denied or failed; a request the requester may not read yet (the hub grants
// an agent read access to its requests by name, a moment after it files
// them) counts as pending. Otherwise it files a new request from template
// (its metadata, such as generateName and labels, and its spec without the
// request itself), records its name in p (the caller persists p) and
// reports created.
func Request(ctx context.Context, c client.Client, p *PendingRequest, subject pkix.Name, template *certificatesv1.CertificateSigningRequest) (st RequestState, created bool, err error) {
	if p.CSRName != "" {
		csr := &certificatesv1.CertificateSigningRequest{}
		err := c.Get(ctx, types.NamespacedName{Name: p.CSRName}, csr)
		switch {
		case err == nil && csr.Spec.SignerName == template.Spec.SignerName && CSRMatches(csr.Spec.Request, p.Key, subject):
			if st := StateOf(csr); st.Phase != RequestDenied {
				return st, false, nil
			}
		case apierrors.IsForbidden(err):
			return RequestState{Name: p.CSRName, Phase: RequestPending}, false, nil
		case err != nil && !apierrors.IsNotFound(err):
			return RequestState{}, false, fmt.Errorf("read CertificateSigningRequest %s on the hub: %w", p.CSRName, err)
		}
	}
	request, err := certutil.MakeCSR(p.Key, &subject, nil, nil)
	if err != nil {
		return RequestState{}, false, fmt.Errorf("create a certificate request for %s: %w", subject.CommonName, err)
	}
	csr := template.DeepCopy()
	csr.Spec.Request = request
	if err := c.Create(ctx, csr); err != nil {
		return RequestState{}, false, fmt.Errorf("create a CertificateSigningRequest for %s on the hub: %w", subject.CommonName, err)
	}
	p.CSRName = csr.Name
	return StateOf(csr), true, nil
}

// RotationFractionOf returns the remaining-life fraction in
// [MinRotationFraction, MaxRotationFraction) below which cert is rotated,
// drawn from the certificate's signature: like RotationFraction it spreads
// the renewals of many certificates, but it stays the same for one
// certificate across checks and restarts.
func RotationFractionOf(cert *x509.Certificate) float64 {
	var seed uint64
	if sig := cert.Signature; len(sig) >= 8 {
		seed = binary.BigEndian.Uint64(sig[len(sig)-8:])
	}
	// The top 53 bits give a float64 in [0, 1) exactly; the sum may still
	// round up to the bound.
	f := MinRotationFraction + float64(seed>>11)/(1<<53)*(MaxRotationFraction-MinRotationFraction)
	return min(f, math.Nextafter(MaxRotationFraction, 0))
}
