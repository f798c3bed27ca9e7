package csr

import (
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// UnsignedGrace is how long an approved kube-apiserver client request may
// wait for its certificate before the hub is taken to sign none: a
// signing controller answers within seconds.
const UnsignedGrace = 30 * time.Second

// Unsigned reports, for an approved kube-apiserver client request that has
// neither a certificate nor a Failed condition, how long ago it was
// approved; zero for any other request. A hub whose controller manager
// signs no client certificates (Amazon EKS and other managed offerings)
// leaves every approved request so.
func Unsigned(obj *certificatesv1.CertificateSigningRequest, now time.Time) time.Duration {
	if obj.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || len(obj.Status.Certificate) > 0 {
		return 0
	}
	st := certs.StateOf(obj)
	if st.Refusal != nil || !st.Approved || st.ApprovedAt.IsZero() || now.Before(st.ApprovedAt) {
		return 0
	}
	return now.Sub(st.ApprovedAt)
}

// UnsignedHint explains a request that stayed Unsigned for more than
// UnsignedGrace, and what to do.
func UnsignedHint(name string) string {
	return fmt.Sprintf("CSR %s was approved more than %s ago and still has no certificate: this hub's controller manager signs no %s certificates (as on Amazon EKS); join the cluster again with `kubectl ocm join --registration-auth token`, which needs no signer",
		name, UnsignedGrace, certificatesv1.KubeAPIServerClientSignerName)
}
