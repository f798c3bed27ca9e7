package csr

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// addonRequest builds a valid-looking request of add-on addon on cluster
// with the add-on's default subject on subjectCluster, made by requester.
func addonRequest(cluster, addon, subjectCluster, requester string) Request {
	return Request{
		Name: "addon-csr", Cluster: cluster, Addon: addon, Requester: requester,
		SignerName:    certificatesv1.KubeAPIServerClientSignerName,
		Usages:        AgentUsages(),
		CommonName:    identity.AddonUserName(subjectCluster, addon, addon),
		Organizations: identity.AddonDefaultGroups(subjectCluster, addon),
		PublicKey:     p256.Public(),
	}
}

func TestValidateAddon(t *testing.T) {
	good := addonRequest("cluster1", "helloworld", "cluster1", agent1)
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{"default subject", good, ""},
		{"the cluster agents' token signer", with(good, func(r *Request) { r.SignerName = certs.AgentTokenSignerName }), "not an add-on signer"},
		{"only the per-cluster group", with(good, func(r *Request) { r.Organizations = r.Organizations[:1] }), ""},
		{"no organization", with(good, func(r *Request) { r.Organizations = nil }), ""},
		{"another agent name", with(good, func(r *Request) { r.CommonName = identity.AddonUserName("cluster1", "helloworld", "other") }), ""},
		{"organizational units", with(good, func(r *Request) { r.OrganizationalUnits = []string{"team-a"} }), ""},
		{"no cluster label", with(good, func(r *Request) { r.Cluster = "" }), "no open-cluster-management.io/cluster-name label"},
		{"no add-on label", with(good, func(r *Request) { r.Addon = "" }), "no open-cluster-management.io/addon-name label"},
		{"another kubernetes.io signer", with(good, func(r *Request) { r.SignerName = "kubernetes.io/kubelet-serving" }), "signer kubernetes.io/kubelet-serving"},
		{"custom signer, any subject", with(good, func(r *Request) {
			r.SignerName, r.CommonName, r.Organizations = "example.com/custom", "anyone", []string{"any-group"}
		}), ""},
		{"custom signer, server auth", with(good, func(r *Request) {
			r.SignerName, r.Usages = "example.com/custom", append(r.Usages, certificatesv1.UsageServerAuth)
		}), `usage "server auth"`},
		{"custom signer, DNS name", with(good, func(r *Request) { r.SignerName, r.AltNames = "example.com/custom", []string{"a.example"} }), "subject alternative names"},
		{"custom signer, no add-on label", with(good, func(r *Request) { r.SignerName, r.Addon = "example.com/custom", "" }), "no open-cluster-management.io/addon-name label"},
		{"server auth", with(good, func(r *Request) { r.Usages = append(r.Usages, certificatesv1.UsageServerAuth) }), `usage "server auth"`},
		{"subject of another cluster", addonRequest("cluster1", "helloworld", "cluster2", agent1), "common name"},
		{"subject of another add-on", with(good, func(r *Request) { r.CommonName = identity.AddonUserName("cluster1", "other", "other") }), "common name"},
		{"add-on name as prefix of another", with(good, func(r *Request) { r.CommonName = identity.AddonUserName("cluster1", "helloworld2", "x") }), "common name"},
		{"no agent name", with(good, func(r *Request) { r.CommonName = identity.AddonUserName("cluster1", "helloworld", "") }), "common name"},
		{"the cluster's agent identity", with(good, func(r *Request) { r.CommonName = agent1 }), "common name"},
		{"system:masters", with(good, func(r *Request) { r.Organizations = append(r.Organizations, "system:masters") }), `"system:masters"`},
		{"group of another cluster", with(good, func(r *Request) {
			r.Organizations = []string{identity.AddonClusterGroup("cluster2", "helloworld")}
		}), "organization"},
		{"the cluster's agent group", with(good, func(r *Request) { r.Organizations = []string{identity.ClusterGroup("cluster1")} }), "organization"},
		{"DNS name", with(good, func(r *Request) { r.AltNames = []string{"a.example"} }), "subject alternative names"},
		{"no key", with(good, func(r *Request) { r.PublicKey = nil }), "no public key"},
		{"bad signature", with(good, func(r *Request) { r.SignatureError = x509.ErrUnsupportedAlgorithm }), "signature does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAddon(tt.req)
			if tt.wantErr == "" {
				require.NoError(t, err, "ValidateAddon")
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestDecideAddon(t *testing.T) {
	def := certs.AddonSubject("cluster1", "helloworld", addonv1alpha1.Subject{})
	custom := pkix.Name{CommonName: identity.AddonUserName("cluster1", "helloworld", "custom"),
		Organization: []string{identity.AddonClusterGroup("cluster1", "helloworld")}, OrganizationalUnit: []string{"ou"}}
	facts := AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{def}}
	good := addonRequest("cluster1", "helloworld", "cluster1", agent1)
	// A custom signer's request, and the facts of a template naming its subject.
	signed := pkix.Name{CommonName: "addon-user", Organization: []string{"addon-group"}}
	signer := with(good, func(r *Request) {
		r.SignerName, r.CommonName, r.Organizations = "example.com/custom", signed.CommonName, signed.Organization
	})
	signerFacts := AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{signed}, SignedSubjects: []pkix.Name{signed}}
	tests := []struct {
		name  string
		req   Request
		facts AddonFacts
		want  bool
		why   string
	}{
		{"default registration", good, facts, true, "registration of add-on helloworld"},
		{"groups in another order", with(good, func(r *Request) {
			r.Organizations = []string{r.Organizations[2], r.Organizations[0], r.Organizations[1]}
		}), facts, true, "registration"},
		{"custom registration", with(good, func(r *Request) {
			r.CommonName, r.Organizations, r.OrganizationalUnits = custom.CommonName, custom.Organization, custom.OrganizationalUnit
		}), AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{def, custom}}, true, "registration"},
		{"subset of the registration's groups", with(good, func(r *Request) { r.Organizations = r.Organizations[:1] }), facts, false, "not the subject of a registration"},
		{"organizational unit not registered", with(good, func(r *Request) { r.OrganizationalUnits = []string{"ou"} }), facts, false, "not the subject of a registration"},
		{"no registration", good, AddonFacts{ClusterAccepted: true, AddonExists: true}, false, "not the subject of a registration"},
		{"no ManagedClusterAddOn", good, AddonFacts{ClusterAccepted: true}, false, "ManagedClusterAddOn helloworld does not exist in namespace cluster1"},
		{"cluster not accepted", good, AddonFacts{AddonExists: true, Subjects: facts.Subjects}, false, "not accepted"},
		{"requested by another cluster's agent", addonRequest("cluster1", "helloworld", "cluster1", agent2), facts, false, "not an agent identity of cluster cluster1"},
		{"requested by the bootstrap identity", addonRequest("cluster1", "helloworld", "cluster1", bootstrap), facts, false, "not an agent identity"},
		{"requested by the cluster's token identity", addonRequest("cluster1", "helloworld", "cluster1", identity.AgentTokenUserName("cluster1")), facts, true, "registration"},
		{"requested by another cluster's token identity", addonRequest("cluster1", "helloworld", "cluster1", identity.AgentTokenUserName("cluster2")), facts, false, "not an agent identity of cluster cluster1"},
		// M6: a ServiceAccount of the cluster namespace, which the
		// namespace's editors impersonate, is no agent identity.
		{"requested by ServiceAccount klusterlet of the cluster namespace", addonRequest("cluster1", "helloworld", "cluster1", "system:serviceaccount:cluster1:klusterlet"), facts, false, "not an agent identity"},
		{"requested by the add-on itself", addonRequest("cluster1", "helloworld", "cluster1", def.CommonName), facts, false, "not an agent identity"},
		{"subject of another cluster", addonRequest("cluster1", "helloworld", "cluster2", agent1), facts, false, "common name"},
		{"subject of another add-on registered in this one", with(addonRequest("cluster1", "helloworld", "cluster1", agent1), func(r *Request) {
			r.CommonName = identity.AddonUserName("cluster1", "other", "other")
		}), AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{{CommonName: identity.AddonUserName("cluster1", "other", "other")}}}, false, "common name"},
		{"administrator registered in the status", with(good, func(r *Request) {
			r.CommonName, r.Organizations = "kubernetes-admin", []string{"system:masters"}
		}), AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}}}}, false, "common name"},
		{"custom signer: template registration", signer, signerFacts, true, "with signer example.com/custom"},
		{"custom signer: no signingCA", signer, AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: signerFacts.Subjects},
			false, "names signer example.com/custom with a signingCA"},
		{"custom signer: status subject differs from the template's", signer, AddonFacts{ClusterAccepted: true, AddonExists: true,
			Subjects: signerFacts.Subjects, SignedSubjects: []pkix.Name{{CommonName: "other"}}}, false, "not the subject the AddOnTemplate"},
		{"custom signer: subject not registered", with(signer, func(r *Request) { r.CommonName = "other" }), signerFacts, false, "not the subject of a registration"},
		{"custom signer: another cluster's agent", with(signer, func(r *Request) { r.Requester = agent2 }), signerFacts, false, "not an agent identity of cluster cluster1"},
		{"custom signer: the bootstrap identity", with(signer, func(r *Request) { r.Requester = bootstrap }), signerFacts, false, "not an agent identity"},
		{"custom signer: cluster not accepted", signer, AddonFacts{AddonExists: true, Subjects: signerFacts.Subjects, SignedSubjects: signerFacts.SignedSubjects}, false, "not accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := DecideAddon(tt.req, tt.facts)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("DecideAddon = %v (%s), want %v with a reason containing %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestRegistrationSubjects(t *testing.T) {
	regs := []addonv1alpha1.RegistrationConfig{
		{SignerName: certificatesv1.KubeAPIServerClientSignerName},
		{SignerName: "example.com/custom", Subject: addonv1alpha1.Subject{User: "custom"}},
		{SignerName: certificatesv1.KubeAPIServerClientSignerName, Subject: addonv1alpha1.Subject{User: "u", Groups: []string{"g"}, OrganizationUnits: []string{"ou"}}},
	}
	if got := RegistrationSubjects("c1", "a1", "example.com/custom", regs); len(got) != 1 || got[0].CommonName != "custom" {
		t.Errorf("RegistrationSubjects of the custom signer = %v, want the custom subject", got)
	}
	got := RegistrationSubjects("c1", "a1", certificatesv1.KubeAPIServerClientSignerName, regs)
	want := []pkix.Name{
		{CommonName: identity.AddonUserName("c1", "a1", "a1"), Organization: identity.AddonDefaultGroups("c1", "a1")},
		{CommonName: "u", Organization: []string{"g"}, OrganizationalUnit: []string{"ou"}},
	}
	if len(got) != len(want) {
		t.Fatalf("RegistrationSubjects = %v, want %v", got, want)
	}
	for i := range want {
		if !certs.SubjectEqual(got[i], want[i]) {
			t.Errorf("subject %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestIsAddonRequest(t *testing.T) {
	csr := func(labels map[string]string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	if !IsAddonRequest(csr(map[string]string{clusterv1.ClusterNameLabelKey: "c1", addonv1alpha1.AddonLabelKey: "a1"})) {
		t.Error("a labeled add-on request is not an add-on request")
	}
	if IsAddonRequest(csr(map[string]string{clusterv1.ClusterNameLabelKey: "c1"})) {
		t.Error("a cluster request is an add-on request")
	}
}

func TestParseAddonRequest(t *testing.T) {
	subject := certs.AddonSubject("cluster1", "helloworld", addonv1alpha1.Subject{})
	subject.OrganizationalUnit = []string{"ou"}
	data := pemRequest(t, p256, &x509.CertificateRequest{Subject: subject})
	req, err := ParseRequest(&certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{clusterv1.ClusterNameLabelKey: "cluster1", addonv1alpha1.AddonLabelKey: "helloworld"}},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: data, Username: agent1, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if req.Addon != "helloworld" || strings.Join(req.OrganizationalUnits, ",") != "ou" {
		t.Errorf("ParseRequest = %+v", req)
	}
	subject.OrganizationalUnit = []string{"ou"}
	if ok, why := DecideAddon(req, AddonFacts{ClusterAccepted: true, AddonExists: true, Subjects: []pkix.Name{subject}}); !ok {
		t.Errorf("a real add-on request is not approved: %s", why)
	}
}
