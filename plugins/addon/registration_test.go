package addon

import (
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// registered returns mca with a kube-apiserver-client registration and driver.
func registered(m addonv1alpha1.ManagedClusterAddOn, driver string) addonv1alpha1.ManagedClusterAddOn {
	m.Status.Registrations = []addonv1alpha1.RegistrationConfig{{SignerName: addonv1alpha1.KubeAPIServerClientSignerName}}
	m.Status.KubeClientDriver = driver
	return m
}

// request returns a CSR created age ago with conds, issued when issued.
func request(name string, age time.Duration, issued bool, conds ...certificatesv1.CertificateSigningRequestCondition) certificatesv1.CertificateSigningRequest {
	csr := certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
	csr.Status.Conditions = conds
	if issued {
		csr.Status.Certificate = []byte("cert")
	}
	return csr
}

func TestRegistrationTable(t *testing.T) {
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved"}
	denied := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Forbidden", Message: "not ours"}
	tests := []struct {
		name string
		mca  addonv1alpha1.ManagedClusterAddOn
		csrs map[string][]certificatesv1.CertificateSigningRequest
		want []string
	}{
		{"csr driver, issued", registered(mca("c1", "hello", cond(addonv1alpha1.ManagedClusterAddOnCertificateRotated, metav1.ConditionTrue, "ClientCertificateUpdated",
			"Client certificate rotated through CertificateSigningRequest addon-c1-hello-x; Secret ns/hello-hub-kubeconfig is valid until 2026-02-01T00:00:00Z")), "csr"),
			map[string][]certificatesv1.CertificateSigningRequest{"c1": {request("addon-c1-hello-x", time.Hour, true, approved)}},
			[]string{"c1", "csr", "yes", "2026-02-01T00:00:00Z (in 30d)", "addon-c1-hello-x Issued (60m old)"}},
		{"csr driver, denied", registered(mca("c1", "hello", cond(addonv1alpha1.ManagedClusterAddOnCertificateRotated, metav1.ConditionFalse, "ClientCertificateUpdateFailed", "denied")), "csr"),
			map[string][]certificatesv1.CertificateSigningRequest{"c1": {request("new", time.Minute, false, denied), request("old", time.Hour, true, approved)}},
			[]string{"c1", "csr", "no", "new Denied (60s old): Forbidden not ours"}},
		{"csr driver, pending", registered(mca("c1", "hello"), "csr"),
			map[string][]certificatesv1.CertificateSigningRequest{"c1": {request("p", time.Minute, false)}},
			[]string{"p Pending (60s old): waiting for the hub's approval"}},
		{"token driver", registered(mca("c2", "hello", cond(addonv1alpha1.ManagedClusterAddOnTokenRefreshed, metav1.ConditionTrue, "AddonTokenRefreshed",
			"Addon token refreshed, expires at 2027-01-02T00:00:00Z; refreshed after 2026-10-20T00:00:00Z")), "token"),
			map[string][]certificatesv1.CertificateSigningRequest{},
			[]string{"c2", "token", "yes", "2027-01-02T00:00:00Z (in 365d)", "2026-10-20T00:00:00Z (in 291d)"}},
		{"requests not readable", registered(mca("c1", "hello"), ""), nil, []string{"c1", "(not reported)", "no", "unknown"}},
		{"no registration", mca("c3", "hello"), map[string][]certificatesv1.CertificateSigningRequest{}, []string{"c3", "-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, RegistrationTable([]addonv1alpha1.ManagedClusterAddOn{tt.mca}, tt.csrs, now), true)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("table lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
