package certs

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

func TestStateOf(t *testing.T) {
	cond := func(typ certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue, Reason: "R"}
	}
	approved := cond(certificatesv1.CertificateApproved)
	notTrue := func(c certificatesv1.CertificateSigningRequestCondition) certificatesv1.CertificateSigningRequestCondition {
		c.Status = corev1.ConditionFalse
		return c
	}
	type conds = []certificatesv1.CertificateSigningRequestCondition
	tests := []struct {
		name         string
		conds        conds
		cert         []byte
		want         RequestPhase
		wantApproved bool
		wantRefusal  certificatesv1.RequestConditionType
	}{
		{name: "new", want: RequestPending},
		{name: "approved, not signed yet", conds: conds{approved}, want: RequestPending, wantApproved: true},
		{name: "issued", conds: conds{approved}, cert: []byte("CERT"), want: RequestIssued, wantApproved: true},
		{name: "certificate without approval", cert: []byte("CERT"), want: RequestPending},
		{name: "denied", conds: conds{cond(certificatesv1.CertificateDenied)}, want: RequestDenied, wantRefusal: certificatesv1.CertificateDenied},
		{name: "failed", conds: conds{approved, cond(certificatesv1.CertificateFailed)}, want: RequestDenied, wantApproved: true, wantRefusal: certificatesv1.CertificateFailed},
		{name: "approval not True", conds: conds{notTrue(approved)}, cert: []byte("CERT"), want: RequestPending},
		{name: "denial not True", conds: conds{approved, notTrue(cond(certificatesv1.CertificateDenied))}, want: RequestPending, wantApproved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: tt.conds, Certificate: tt.cert}}
			st := StateOf(csr)
			if st.Phase != tt.want || st.Approved != tt.wantApproved {
				t.Errorf("phase = %v, approved %v; want %v, %v", st.Phase, st.Approved, tt.want, tt.wantApproved)
			}
			var refusal certificatesv1.RequestConditionType
			if st.Refusal != nil {
				refusal = st.Refusal.Type
			}
			if refusal != tt.wantRefusal || st.Decided() != (tt.wantApproved || tt.wantRefusal != "") {
				t.Errorf("refusal = %q, decided %v; want %q", refusal, st.Decided(), tt.wantRefusal)
			}
		})
	}
}

func TestRequest(t *testing.T) {
	subject := AddonSubject("c1", "a1", addonv1alpha1.Subject{})
	template := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "new"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientSignerName},
	}
	p, err := NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewPendingRequest()
	existing := func(name string, pr *PendingRequest, subject pkix.Name, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
		csr := template.DeepCopy()
		csr.Name = name
		csr.Spec.Request = mustCSR(t, pr, subject)
		for _, c := range conds {
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return csr
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "old", errors.New("no"))
	tests := []struct {
		name        string
		csrName     string
		objs        []client.Object
		getErr      error
		wantName    string
		wantCreated bool
		wantErr     bool
	}{
		{name: "nothing filed yet", wantName: "new", wantCreated: true},
		{name: "pending request is reused", csrName: "old", objs: []client.Object{existing("old", p, subject)}, wantName: "old"},
		{name: "request gone", csrName: "old", wantName: "new", wantCreated: true},
		{name: "request of another key", csrName: "old", objs: []client.Object{existing("old", other, subject)}, wantName: "new", wantCreated: true},
		{name: "request of another subject", csrName: "old", objs: []client.Object{existing("old", p, AgentSubject("c1", "a"))}, wantName: "new", wantCreated: true},
		{name: "denied request", csrName: "old", objs: []client.Object{existing("old", p, subject, certificatesv1.CertificateDenied)}, wantName: "new", wantCreated: true},
		{name: "not readable yet", csrName: "old", getErr: forbidden, wantName: "old"},
		{name: "hub unreachable", csrName: "old", getErr: errors.New("connection refused"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(tt.objs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if tt.getErr != nil {
						return tt.getErr
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			pr := *p
			pr.CSRName = tt.csrName
			st, created, err := Request(context.Background(), c, &pr, subject, template)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Request error = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if st.Name != tt.wantName || created != tt.wantCreated || pr.CSRName != tt.wantName || st.Phase != RequestPending {
				t.Errorf("Request = %+v, created %v, recorded %q; want %q, created %v", st, created, pr.CSRName, tt.wantName, tt.wantCreated)
			}
			if created {
				csr := &certificatesv1.CertificateSigningRequest{}
				if err := c.Get(context.Background(), client.ObjectKey{Name: "new"}, csr); err != nil {
					t.Fatal(err)
				}
				if !CSRMatches(csr.Spec.Request, p.Key, subject) || csr.Spec.SignerName != template.Spec.SignerName {
					t.Error("the filed request is not for the pending key and subject, or lost the template's spec")
				}
			}
		})
	}
}

func TestAddonSubject(t *testing.T) {
	def := AddonSubject("c1", "a1", addonv1alpha1.Subject{})
	if def.CommonName != identity.AddonUserName("c1", "a1", "a1") || !sameSet(def.Organization, identity.AddonDefaultGroups("c1", "a1")) {
		t.Errorf("default subject = %+v", def)
	}
	custom := AddonSubject("c1", "a1", addonv1alpha1.Subject{User: "u", Groups: []string{"g1", "g2"}, OrganizationUnits: []string{"ou"}})
	if !SubjectEqual(custom, pkix.Name{CommonName: "u", Organization: []string{"g2", "g1"}, OrganizationalUnit: []string{"ou"}}) {
		t.Errorf("custom subject = %+v", custom)
	}
	if SubjectEqual(custom, pkix.Name{CommonName: "u", Organization: []string{"g1", "g2"}}) {
		t.Error("subjects that differ in their organizational units are equal")
	}
}

func TestRotationFractionOf(t *testing.T) {
	seen := map[float64]bool{}
	for i := range 200 {
		sig := make([]byte, 64)
		for j := range sig {
			sig[j] = byte(i*31 + j*7)
		}
		cert := &x509.Certificate{Signature: sig}
		f := RotationFractionOf(cert)
		if f < MinRotationFraction || f >= MaxRotationFraction {
			t.Fatalf("RotationFractionOf = %v, want it in [%v, %v)", f, MinRotationFraction, MaxRotationFraction)
		}
		if RotationFractionOf(cert) != f {
			t.Fatal("RotationFractionOf changes for the same certificate")
		}
		seen[f] = true
	}
	if len(seen) < 100 {
		t.Errorf("RotationFractionOf gave %d distinct fractions for 200 certificates, want them spread", len(seen))
	}
	all := &x509.Certificate{Signature: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	if f := RotationFractionOf(all); f >= MaxRotationFraction {
		t.Errorf("RotationFractionOf of the largest seed = %v, want below %v", f, MaxRotationFraction)
	}
}

// mustCSR returns a PEM request for subject made with p's key.
func mustCSR(t *testing.T, p *PendingRequest, subject pkix.Name) []byte {
	t.Helper()
	data, err := certutil.MakeCSR(p.Key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// scheme returns a scheme that knows CertificateSigningRequests.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := certificatesv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
