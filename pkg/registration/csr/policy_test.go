package csr

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Test identities.
var (
	agent1    = identity.AgentUserName("cluster1", "agent1")
	agent2    = identity.AgentUserName("cluster2", "agent1")
	bootstrap = identity.BootstrapUser
	bound1    = identity.ClusterBootstrapUser("cluster1")
	bound2    = identity.ClusterBootstrapUser("cluster2")
)

// p256 is the key of the requests built by request.
var p256 = mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))

func mustKey[K any](k K, err error) K {
	if err != nil {
		panic(err)
	}
	return k
}

// request builds a valid-looking agent request labeled cluster, for agent1
// of subjectCluster, made by requester.
func request(cluster, subjectCluster, requester string) Request {
	return Request{
		Name: "csr", Cluster: cluster, Requester: requester, SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:        AgentUsages(),
		CommonName:    identity.AgentUserName(subjectCluster, "agent1"),
		Organizations: []string{identity.ManagedClustersGroup, identity.ClusterGroup(subjectCluster)},
		PublicKey:     p256.Public(),
	}
}

// with returns request(...) changed by edit.
func with(r Request, edit func(*Request)) Request {
	edit(&r)
	return r
}

func TestValidate(t *testing.T) {
	good := request("cluster1", "cluster1", bootstrap)
	rsa1024 := mustKey(rsa.GenerateKey(rand.Reader, 1024))
	rsa2048 := mustKey(rsa.GenerateKey(rand.Reader, 2048))
	p224 := mustKey(ecdsa.GenerateKey(elliptic.P224(), rand.Reader))
	edPub, _ := mustKey2(ed25519.GenerateKey(rand.Reader))
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{"agent request", good, ""},
		{"only the cluster group", with(good, func(r *Request) { r.Organizations = r.Organizations[1:] }), "organizations"},
		{"both groups, the cluster's first", with(good, func(r *Request) { r.Organizations = []string{r.Organizations[1], r.Organizations[0]} }), ""},
		{"a group twice", with(good, func(r *Request) { r.Organizations = append(r.Organizations, identity.ManagedClustersGroup) }), "organizations"},
		{"only client auth", with(good, func(r *Request) { r.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth} }), ""},
		{"no cluster label", with(good, func(r *Request) { r.Cluster = "" }), "no open-cluster-management.io/cluster-name label"},
		{"other signer", with(good, func(r *Request) { r.SignerName = certificatesv1.KubeletServingSignerName }), "signer kubernetes.io/kubelet-serving"},
		{"legacy signer", with(good, func(r *Request) { r.SignerName = "kubernetes.io/legacy-unknown" }), "is neither kubernetes.io/kube-apiserver-client nor " + certs.AgentTokenSignerName},
		{"extra usage server auth", with(good, func(r *Request) { r.Usages = append(r.Usages, certificatesv1.UsageServerAuth) }), `usage "server auth"`},
		{"extra usage cert sign", with(good, func(r *Request) { r.Usages = append(r.Usages, certificatesv1.UsageCertSign) }), `usage "cert sign"`},
		{"no client auth", with(good, func(r *Request) { r.Usages = r.Usages[:2] }), `lack "client auth"`},
		{"subject names another cluster", request("cluster1", "cluster2", bootstrap), `common name "system:open-cluster-management:cluster2:agent1"`},
		{"common name without agent", with(good, func(r *Request) { r.CommonName = identity.ClusterGroup("cluster1") }), "common name"},
		{"agent id with a colon", with(good, func(r *Request) { r.CommonName += ":x" }), "common name"},
		{"common name of an administrator", with(good, func(r *Request) { r.CommonName = "kubernetes-admin" }), "common name"},
		{"extra organization system:masters", with(good, func(r *Request) { r.Organizations = append(r.Organizations, "system:masters") }), "system:masters"},
		{"organization of another cluster", with(good, func(r *Request) { r.Organizations = []string{identity.ClusterGroup("cluster2")} }), "organizations"},
		{"only the managed-clusters group", with(good, func(r *Request) { r.Organizations = []string{identity.ManagedClustersGroup} }), "organizations"},
		{"cluster group twice", with(good, func(r *Request) { r.Organizations = append(r.Organizations, identity.ClusterGroup("cluster1")) }), "organizations"},
		{"no organization", with(good, func(r *Request) { r.Organizations = nil }), "organizations"},
		{"DNS name", with(good, func(r *Request) { r.AltNames = []string{"hub.example.com"} }), "subject alternative names"},
		{"RSA 2048", with(good, func(r *Request) { r.PublicKey = rsa2048.Public() }), ""},
		{"RSA 1024", with(good, func(r *Request) { r.PublicKey = rsa1024.Public() }), "RSA key of 1024 bits is too small"},
		{"ECDSA P-224", with(good, func(r *Request) { r.PublicKey = p224.Public() }), "224-bit curve is too small"},
		{"Ed25519", with(good, func(r *Request) { r.PublicKey = edPub }), ""},
		{"no key", with(good, func(r *Request) { r.PublicKey = nil }), "no public key"},
		{"bad signature", with(good, func(r *Request) { r.SignatureError = x509.InsecureAlgorithmError(x509.MD5WithRSA) }), "signature does not verify"},
		{"token driver", with(good, func(r *Request) { r.SignerName = certs.AgentTokenSignerName }), ""},
		{"token driver, RSA key", with(good, func(r *Request) { r.SignerName, r.PublicKey = certs.AgentTokenSignerName, rsa2048.Public() }), "cannot receive a sealed token"},
		{"token driver, Ed25519 key", with(good, func(r *Request) { r.SignerName, r.PublicKey = certs.AgentTokenSignerName, edPub }), "cannot receive a sealed token"},
		{"token driver, other cluster", with(request("cluster1", "cluster2", bootstrap), func(r *Request) { r.SignerName = certs.AgentTokenSignerName }), "common name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.req)
			if tt.wantErr == "" {
				require.NoError(t, err, "Validate")
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func mustKey2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func TestCheckRequester(t *testing.T) {
	tests := []struct {
		name      string
		requester string
		wantErr   bool
	}{
		{"the cluster's agent", agent1, false},
		{"another cluster's agent", agent2, true},
		{"the cluster's bound bootstrap identity", bound1, false},
		{"another cluster's bound bootstrap identity", bound2, true},
		{"shared bootstrap ServiceAccount", bootstrap, false},
		{"bootstrap token", identity.BootstrapTokenUserPrefix + "abcdef", false},
		{"anyone else", "alice", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRequester(request("cluster1", "cluster1", tt.requester))
			if (err != nil) != tt.wantErr {
				t.Errorf("CheckRequester(%s) = %v, wantErr %v", tt.requester, err, tt.wantErr)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	accepted := Facts{ClusterAccepted: true}
	autoBootstrap := Facts{AutoApproveUsers: []string{bootstrap, bound2}}
	tests := []struct {
		name  string
		req   Request
		facts Facts
		want  Action
	}{
		{"renewal by the same cluster", request("cluster1", "cluster1", agent1), accepted, ApproveIfAuthorized},
		{"renewal without the managed-clusters group", with(request("cluster1", "cluster1", agent1), func(r *Request) { r.Organizations = r.Organizations[1:] }), accepted, LeavePending},
		{"renewal of a cluster not accepted", request("cluster1", "cluster1", agent1), Facts{}, LeavePending},
		{"subject names another cluster than the label", request("cluster1", "cluster2", agent2), accepted, LeavePending},
		{"renewal requested by another cluster's identity", request("cluster2", "cluster2", agent1), accepted, LeavePending},
		{"another agent of the same cluster", request("cluster1", "cluster1", identity.AgentUserName("cluster1", "agent2")), accepted, LeavePending},
		{"bootstrap requester not in the list", request("cluster1", "cluster1", bootstrap), accepted, LeavePending},
		{"bootstrap requester in the list", request("cluster1", "cluster1", bootstrap), autoBootstrap, Approve},
		{"listed bootstrap requester, subject names another cluster", request("cluster1", "cluster2", bootstrap), autoBootstrap, LeavePending},
		{"listed bound identity of another cluster", request("cluster1", "cluster1", bound2), autoBootstrap, LeavePending},
		{"listed bound identity of its cluster", request("cluster2", "cluster2", bound2), autoBootstrap, Approve},
		// H1: a bootstrap-token holder must not become the agent of a
		// cluster the hub accepted already.
		{"listed bootstrap requester, cluster accepted before", request("cluster1", "cluster1", bootstrap), Facts{AutoApproveUsers: []string{bootstrap}, AcceptedBefore: true, ClusterAccepted: true}, LeavePending},
		{"listed bootstrap requester, cluster accepted but not yet reported", request("cluster1", "cluster1", bootstrap), Facts{AutoApproveUsers: []string{bootstrap}, AcceptedBefore: true}, LeavePending},
		{"listed bound identity, its cluster accepted before", request("cluster2", "cluster2", bound2), Facts{AutoApproveUsers: []string{bound2}, AcceptedBefore: true}, LeavePending},
		{"extra organization", with(request("cluster1", "cluster1", agent1), func(r *Request) { r.Organizations = append(r.Organizations, "system:masters") }), accepted, LeavePending},
		{"server auth usage", with(request("cluster1", "cluster1", agent1), func(r *Request) { r.Usages = append(r.Usages, certificatesv1.UsageServerAuth) }), accepted, LeavePending},
		{"no cluster label", request("", "cluster1", agent1), accepted, LeavePending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Decide(tt.req, tt.facts)
			if got != tt.want {
				t.Errorf("Decide = %s (%s), want %s", got, why, tt.want)
			}
			if why == "" {
				t.Error("Decide gave no reason")
			}
		})
	}
}

func TestDecideFirstJoin(t *testing.T) {
	tests := []struct {
		name  string
		req   Request
		trust FirstJoinTrust
		want  bool
		why   string
	}{
		{"shared bootstrap ServiceAccount", request("cluster1", "cluster1", bootstrap), FirstJoinTrust{}, true, "shared bootstrap identity"},
		{"bootstrap token", with(request("cluster1", "cluster1", identity.BootstrapTokenUserPrefix+"abcdef"), func(r *Request) { r.Groups = []string{identity.BootstrapTokenGroup, "system:authenticated"} }), FirstJoinTrust{}, true, "shared bootstrap identity"},
		{"node bootstrap token", with(request("cluster1", "cluster1", identity.BootstrapTokenUserPrefix+"abcdef"), func(r *Request) { r.Groups = []string{"system:bootstrappers:kubeadm:default-node-token"} }), FirstJoinTrust{}, false, "not in group " + identity.BootstrapTokenGroup},
		{"listed node bootstrap token", request("cluster1", "cluster1", identity.BootstrapTokenUserPrefix+"abcdef"), FirstJoinTrust{Requesters: []string{identity.BootstrapTokenUserPrefix + "abcdef"}}, true, "listed"},
		{"the cluster's bound identity", request("cluster1", "cluster1", bound1), FirstJoinTrust{}, true, "cluster-bound"},
		{"another cluster's bound identity", request("cluster1", "cluster1", bound2), FirstJoinTrust{AnyRequester: true}, false, "of cluster cluster2, not of cluster1"},
		{"label X, subject Y", request("cluster1", "cluster2", bootstrap), FirstJoinTrust{}, false, "common name"},
		{"extra organization", with(request("cluster1", "cluster1", bootstrap), func(r *Request) { r.Organizations = append(r.Organizations, "system:masters") }), FirstJoinTrust{AnyRequester: true}, false, "system:masters"},
		{"wrong signer", with(request("cluster1", "cluster1", bootstrap), func(r *Request) { r.SignerName = certificatesv1.KubeletServingSignerName }), FirstJoinTrust{}, false, "signer"},
		{"extra usages", with(request("cluster1", "cluster1", bootstrap), func(r *Request) { r.Usages = append(r.Usages, certificatesv1.UsageServerAuth) }), FirstJoinTrust{}, false, "server auth"},
		{"unexpected requester", request("cluster1", "cluster1", "alice"), FirstJoinTrust{}, false, "unexpected requester alice"},
		{"listed requester", request("cluster1", "cluster1", "alice"), FirstJoinTrust{Requesters: []string{"alice"}}, true, "listed"},
		{"any requester", request("cluster1", "cluster1", "alice"), FirstJoinTrust{AnyRequester: true}, true, "whatever the requester"},
		{"the cluster's own agent", request("cluster1", "cluster1", agent1), FirstJoinTrust{}, false, "unexpected requester"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := DecideFirstJoin(tt.req, tt.trust)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("DecideFirstJoin = %v (%s), want %v with a reason containing %q", got, why, tt.want, tt.why)
			}
		})
	}
}

// pemRequest returns a PEM certificate request from tmpl signed by key.
func pemRequest(t *testing.T, key crypto.Signer, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestParseRequest(t *testing.T) {
	subject := pkix.Name{CommonName: agent1, Organization: identity.AgentGroups("cluster1")}
	plain := pemRequest(t, p256, &x509.CertificateRequest{Subject: subject})
	withSANs := pemRequest(t, p256, &x509.CertificateRequest{Subject: subject, DNSNames: []string{"a.example"}, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1)}})
	block, _ := pem.Decode(plain)
	block.Bytes[len(block.Bytes)-1] ^= 0xff // corrupt the signature
	tampered := pem.EncodeToMemory(block)

	csr := func(data []byte) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "r1", Labels: map[string]string{clusterv1.ClusterNameLabelKey: "cluster1"}},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: data, Username: bootstrap, SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
		}
	}
	req, err := ParseRequest(csr(plain))
	if err != nil {
		t.Fatal(err)
	}
	if req.Name != "r1" || req.Cluster != "cluster1" || req.CommonName != agent1 || req.Requester != bootstrap || req.SignatureError != nil {
		t.Errorf("ParseRequest = %+v", req)
	}
	if err := Validate(req); err != nil {
		t.Errorf("a real agent request does not validate: %v", err)
	}
	if req, err := ParseRequest(csr(withSANs)); err != nil || strings.Join(req.AltNames, ",") != "a.example,10.0.0.1" {
		t.Errorf("ParseRequest with SANs = %v, %v", req.AltNames, err)
	}
	if req, err := ParseRequest(csr(tampered)); err != nil || req.SignatureError == nil || Validate(req) == nil {
		t.Errorf("a request with a broken signature: SignatureError %v, err %v", req.SignatureError, err)
	}
	if _, err := ParseRequest(csr([]byte("not pem"))); err == nil {
		t.Error("ParseRequest accepted a request that is not PEM")
	}
}

func TestDecided(t *testing.T) {
	for _, tt := range []struct {
		typ    certificatesv1.RequestConditionType
		status corev1.ConditionStatus
		want   bool
	}{
		{certificatesv1.CertificateApproved, corev1.ConditionTrue, true},
		{certificatesv1.CertificateDenied, corev1.ConditionTrue, true},
		{certificatesv1.CertificateFailed, corev1.ConditionTrue, true},
		{certificatesv1.CertificateApproved, corev1.ConditionFalse, false},
		{certificatesv1.CertificateDenied, corev1.ConditionUnknown, false},
		{"", "", false},
	} {
		csr := &certificatesv1.CertificateSigningRequest{}
		if tt.typ != "" {
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: tt.typ, Status: tt.status}}
		}
		if got := Decided(csr); got != tt.want {
			t.Errorf("Decided with condition %s=%s = %v, want %v", tt.typ, tt.status, got, tt.want)
		}
	}
}

func TestUnsigned(t *testing.T) {
	now := time.Now()
	approved := func(at time.Time) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at)}
	}
	req := func(signer string, cert []byte, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: signer},
			Status: certificatesv1.CertificateSigningRequestStatus{Certificate: cert, Conditions: conds},
		}
	}
	client := certificatesv1.KubeAPIServerClientSignerName
	assert.Equal(t, 45*time.Second, Unsigned(req(client, nil, approved(now.Add(-45*time.Second))), now), "approved 45s ago, no certificate")
	assert.Zero(t, Unsigned(req(client, nil), now), "pending")
	assert.Zero(t, Unsigned(req(client, []byte("cert"), approved(now.Add(-time.Hour))), now), "signed")
	assert.Zero(t, Unsigned(req(client, nil, approved(now.Add(-time.Hour)), certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}), now), "failed")
	notApproved := approved(now.Add(-time.Hour))
	notApproved.Status = corev1.ConditionFalse
	assert.Zero(t, Unsigned(req(client, nil, notApproved), now), "Approved condition not True")
	assert.Zero(t, Unsigned(req("kubectl-ocm.io/agent-token", nil, approved(now.Add(-time.Hour))), now), "another signer")
	assert.Contains(t, UnsignedHint("c1-abc"), "--registration-auth token")
}
