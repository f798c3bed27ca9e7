package hub

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// csrSpec describes a certificate request to file: agent1 of cluster, unless
// a field says otherwise. Its name is generated unless name is set.
type csrSpec struct {
	name      string
	label, cn string
	orgs      []string
	signer    string
	usages    []certificatesv1.KeyUsage
	key       crypto.Signer
	dnsNames  []string
}

// agentCSR is the request a well-behaved agent of cluster files.
func agentCSR(cluster string) csrSpec {
	return csrSpec{
		label: cluster, cn: identity.AgentUserName(cluster, "agent1"),
		orgs:   []string{identity.ClusterGroup(cluster), identity.ManagedClustersGroup},
		signer: certificatesv1.KubeAPIServerClientSignerName,
		usages: csr.AgentUsages(),
	}
}

// fileCSR creates the request s as c's user and returns its name, or the
// error of the create.
func fileCSR(ctx context.Context, t *testing.T, c client.Client, s csrSpec) (string, error) {
	t.Helper()
	key := s.key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: s.cn, Organization: s.orgs}, DNSNames: s.dnsNames,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: map[string]string{}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: s.signer, Usages: s.usages,
		},
	}
	if s.name == "" {
		csr.GenerateName = "forged-"
	}
	if s.label != "" {
		csr.Labels[clusterv1.ClusterNameLabelKey] = s.label
	}
	err = c.Create(ctx, csr)
	return csr.Name, err
}

// mustFileCSR is fileCSR failing t on error.
func mustFileCSR(ctx context.Context, t *testing.T, c client.Client, s csrSpec) string {
	t.Helper()
	name, err := fileCSR(ctx, t, c, s)
	if err != nil {
		t.Fatalf("create CSR labeled %s for %s: %v", s.label, s.cn, err)
	}
	return name
}

// tokenClient returns a client of the hub authenticating with a bootstrap
// token printed by `kubectl ocm hub token`.
func tokenClient(t *testing.T, hubCluster *framework.Cluster, token string) client.Client {
	t.Helper()
	cfg := hubCluster.RESTConfig()
	cfg.CertData, cfg.KeyData = nil, nil
	cfg.BearerToken = token
	return clientFor(t, cfg, nil)
}

// waitIssued waits until kube-controller-manager has issued the certificate
// of the CSR name.
func waitIssued(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "certificate of CSR "+name+" issued", func(ctx context.Context) (bool, error) {
		csr := &certificatesv1.CertificateSigningRequest{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
			return false, err
		}
		return len(csr.Status.Certificate) > 0, nil
	})
}

// TestBootstrapSecurity files forged certificate requests with the shared
// bootstrap identity and checks that neither `kubectl ocm accept` nor the
// hub controller approves any of them, then checks that a cluster-bound
// bootstrap token (`kubectl ocm hub token --cluster-name`) can register its
// own cluster only while the shared token keeps working.
func TestBootstrapSecurity(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env := hubtest.Start(t, 10*time.Minute)
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	stop := startController(t, hubCluster, hub.Options{LeaseGraceRatio: 1.5})
	defer stop()
	ocm := clitest.CLI{Kubeconfig: env.Kubeconfig()}
	bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, identity.BootstrapNamespace, identity.BootstrapServiceAccount, time.Hour)
	boot := clientFor(t, bootCfg, err)
	for _, name := range []string{"cluster-x", "cluster-y"} {
		if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("register %s with the shared bootstrap token: %v", name, err)
		}
	}
	fx := &bootstrapFixture{ctx: ctx, hub: hubCluster, admin: admin, boot: boot, ocm: ocm}

	t.Run("accept refuses forged requests", fx.forgedRequests)
	t.Run("accept refuses to guess between two agents", fx.twoAgents)
	t.Run("a cluster is bound to its agent's key, not to a request's name", fx.agentKeyBinding)
	t.Run("cluster-bound bootstrap token", fx.boundToken)
	t.Run("cluster-bound bootstrap tokens share one binding, pinned by admission", fx.boundTokenShared)
}

// bootstrapFixture is what the steps of TestBootstrapSecurity share: the
// hub with its registration controller, a client of the shared bootstrap
// identity, which registered cluster-x and cluster-y, and the CLI.
type bootstrapFixture struct {
	ctx   context.Context
	hub   *framework.Cluster
	admin client.Client
	boot  client.Client
	ocm   clitest.CLI
}

// forgedRequests checks that accept refuses forged requests.
func (fx *bootstrapFixture) forgedRequests(t *testing.T) {
	ctx, admin, boot, ocm := fx.ctx, fx.admin, fx.boot, fx.ocm
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	forgeries := map[string]func(*csrSpec){
		"common name of cluster-y": func(s *csrSpec) { s.cn = identity.AgentUserName("cluster-y", "agent1") },
		"label cluster-x, subject of cluster-y": func(s *csrSpec) {
			s.cn, s.orgs = identity.AgentUserName("cluster-y", "agent1"), []string{identity.ClusterGroup("cluster-y"), identity.ManagedClustersGroup}
		},
		"extra organization kubeadm:cluster-admins": func(s *csrSpec) { s.orgs = append(s.orgs, "kubeadm:cluster-admins") },
		"extra group of cluster-y":                  func(s *csrSpec) { s.orgs = append(s.orgs, identity.ClusterGroup("cluster-y")) },
		"organization of cluster-y":                 func(s *csrSpec) { s.orgs = []string{identity.ClusterGroup("cluster-y")} },
		"another signer":                            func(s *csrSpec) { s.signer = "example.com/not-the-apiserver" },
		"extra usage server auth":                   func(s *csrSpec) { s.usages = append(s.usages, certificatesv1.UsageServerAuth) },
		"extra usage cert sign":                     func(s *csrSpec) { s.usages = append(s.usages, certificatesv1.UsageCertSign) },
		"RSA 1024 key":                              func(s *csrSpec) { s.key = weak },
		"DNS subject alternative name":              func(s *csrSpec) { s.dnsNames = []string{"kubernetes.default.svc"} },
	}
	forged := map[string]string{} // CSR name → forgery
	for what, edit := range forgeries {
		s := agentCSR("cluster-x")
		edit(&s)
		forged[mustFileCSR(ctx, t, boot, s)] = what
	}
	// system:masters the API server itself refuses for this signer; with
	// any other signer the policy refuses it.
	masters := agentCSR("cluster-x")
	masters.orgs = append(masters.orgs, "system:masters")
	if _, err := fileCSR(ctx, t, boot, masters); !apierrors.IsForbidden(err) {
		t.Errorf("a request for system:masters: %v, want the API server's Forbidden", err)
	}
	masters.signer = "example.com/not-the-apiserver"
	forged[mustFileCSR(ctx, t, boot, masters)] = "system:masters with another signer"
	real := mustFileCSR(ctx, t, boot, agentCSR("cluster-x"))
	stray := mustFileCSR(ctx, t, admin, agentCSR("cluster-x"))

	r := ocm.Run(ctx, "accept", "--clusters", "cluster-x")
	clitest.ExpectOK(t, r, "CSR "+real+" approved", "set hubAcceptsClient to true for managed cluster cluster-x")
	for name, what := range forged {
		if !strings.Contains(r.ErrOut, "CSR "+name+" of cluster cluster-x skipped: ") {
			t.Errorf("accept did not name forged CSR %s (%s) as skipped:\n%s", name, what, r.ErrOut)
		}
	}
	if !strings.Contains(r.ErrOut, "CSR "+stray+" of cluster cluster-x skipped: it comes from unexpected requester") {
		t.Errorf("accept did not name the CSR of an unexpected requester:\n%s", r.ErrOut)
	}
	waitIssued(ctx, t, admin, real)
	reportJoined(ctx, t, admin, "cluster-x")

	// Trusting any requester does not relax what a request may ask for.
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-x", "--skip-approve-check")
	clitest.ExpectOK(t, r)
	if !strings.Contains(r.ErrOut, "CSR "+stray+" of cluster cluster-x skipped: managed cluster cluster-x is accepted already") {
		t.Errorf("accept on the accepted cluster-x approved or kept quiet about a new registration:\n%s", r.ErrOut)
	}
	expectPending(ctx, t, admin, stray, "a new registration of the accepted cluster-x without --rejoin")
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-x", "--skip-approve-check", "--rejoin")
	clitest.ExpectOK(t, r, "CSR "+stray+" approved")
	// The hub controller, told to trust the bootstrap identity, approves
	// a later good request and still none of the forged ones.
	setAutoApprove(ctx, t, admin, []string{identity.BootstrapUser})
	defer setAutoApprove(ctx, t, admin, nil)
	waitApproved(ctx, t, admin, mustFileCSR(ctx, t, boot, agentCSR("cluster-y")))
	for name, what := range forged {
		expectPending(ctx, t, admin, name, what)
	}

	// The bootstrap identity is trusted with first joins only: a valid
	// request of the token holder for cluster-x, accepted by the
	// administrator, and for cluster-y, accepted automatically a moment
	// ago, stays pending and says why; a first join of cluster-z filed
	// after them is approved, so the hub controller has seen them.
	squatX := mustFileCSR(ctx, t, boot, agentCSR("cluster-x"))
	squatY := mustFileCSR(ctx, t, boot, agentCSR("cluster-y"))
	if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-z"}}); err != nil {
		t.Fatalf("register cluster-z with the shared bootstrap token: %v", err)
	}
	waitApproved(ctx, t, admin, mustFileCSR(ctx, t, boot, agentCSR("cluster-z")))
	expectPending(ctx, t, admin, squatX, "the shared bootstrap token's second registration of the accepted cluster-x")
	expectPending(ctx, t, admin, squatY, "the shared bootstrap token's second registration of the automatically accepted cluster-y")
	mc := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "cluster-y"}, mc); err != nil {
		t.Fatal(err)
	}
	if !mc.Spec.HubAcceptsClient || mc.Annotations[clusterv1.AutomaticallyAcceptedForAnnotationKey] == "" {
		t.Errorf("cluster-y, accepted automatically: hubAcceptsClient %v, annotations %v", mc.Spec.HubAcceptsClient, mc.Annotations)
	}
	// accept does not approve the token holder's request either, unless
	// told that the cluster rejoins.
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-x")
	clitest.ExpectOK(t, r)
	if !strings.Contains(r.ErrOut, "CSR "+squatX+" of cluster cluster-x skipped: managed cluster cluster-x is accepted already") {
		t.Errorf("accept on the accepted cluster-x did not name the new registration as skipped:\n%s", r.ErrOut)
	}
	expectPending(ctx, t, admin, squatX, "the token holder's registration of cluster-x after accept without --rejoin")
}

// twoAgents checks that accept refuses to guess between two agents.
func (fx *bootstrapFixture) twoAgents(t *testing.T) {
	ctx, admin, boot, ocm := fx.ctx, fx.admin, fx.boot, fx.ocm
	// Two valid requests for one new cluster, from the same shared token
	// with different keys: the real agent's and a squatter's. accept
	// approves neither, lists both with their keys, and approves the
	// one named with --csr.
	if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-m"}}); err != nil {
		t.Fatal(err)
	}
	real := mustFileCSR(ctx, t, boot, agentCSR("cluster-m"))
	squat := mustFileCSR(ctx, t, boot, agentCSR("cluster-m"))
	r := ocm.Run(ctx, "accept", "--clusters", "cluster-m", "--wait", "--timeout", "1m")
	clitest.ExpectErr(t, r, "cluster cluster-m has 2 pending requests from different requesters or keys", "CSR "+real+": requester "+identity.BootstrapUser,
		"CSR "+squat+": requester", "key sha256:", "kubectl ocm accept --clusters cluster-m --csr NAME")
	expectPending(ctx, t, admin, real, "one of two requests accept would not choose between")
	expectPending(ctx, t, admin, squat, "one of two requests accept would not choose between")
	clitest.ExpectErr(t, ocm.Run(ctx, "accept", "--clusters", "cluster-m", "--csr", "no-such-request"), "--csr no-such-request: no pending request of cluster cluster-m", "cluster cluster-m was not accepted")
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-m", "--csr", real)
	clitest.ExpectOK(t, r, "CSR "+real+" approved (requester "+identity.BootstrapUser+", agent id ", "set hubAcceptsClient to true for managed cluster cluster-m")
	waitIssued(ctx, t, admin, real)
	expectPending(ctx, t, admin, squat, "the request --csr did not name")
}

// boundToken checks that a cluster-bound bootstrap token registers its own
// cluster only, that a request filed before its token was revoked is never
// approved, and that the shared token keeps working.
func (fx *bootstrapFixture) boundToken(t *testing.T) {
	ctx, hubCluster, admin, ocm := fx.ctx, fx.hub, fx.admin, fx.ocm
	var join hubcli.JoinInfo
	r := ocm.Run(ctx, "hub", "token", "--cluster-name", "cluster-b", "--duration", "1h", "-o", "json")
	clitest.ExpectOK(t, r)
	if err := json.Unmarshal([]byte(r.Out), &join); err != nil || join.HubToken == "" || join.ClusterName != "cluster-b" {
		t.Fatalf("hub token --cluster-name cluster-b -o json: %v (%s)", err, r.Out)
	}
	bound := tokenClient(t, hubCluster, join.HubToken)

	err := bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-c"}})
	assert.ErrorContains(t, err, "may register managed cluster cluster-b only", "cluster-b's token registers cluster-c")
	assert.True(t, apierrors.IsForbidden(err), "cluster-b's token registers cluster-c: %v, want Forbidden", err)
	if _, err := fileCSR(ctx, t, bound, agentCSR("cluster-c")); !apierrors.IsForbidden(err) {
		t.Errorf("cluster-b's token requests cluster-c's certificate: %v, want Forbidden", err)
	}
	unlabeled := agentCSR("cluster-b")
	unlabeled.label = ""
	if _, err := fileCSR(ctx, t, bound, unlabeled); !apierrors.IsForbidden(err) {
		t.Errorf("cluster-b's token files an unlabeled request: %v, want Forbidden", err)
	}
	if err := bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-b"}}); err != nil {
		t.Fatalf("cluster-b's token registers cluster-b: %v", err)
	}
	// Labeled for its own cluster, naming another: admitted, never approved.
	foreign := agentCSR("cluster-b")
	foreign.cn, foreign.orgs = identity.AgentUserName("cluster-c", "agent1"), []string{identity.ClusterGroup("cluster-c")}
	foreignName := mustFileCSR(ctx, t, bound, foreign)
	good := mustFileCSR(ctx, t, bound, agentCSR("cluster-b"))
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-b", "--skip-approve-check")
	clitest.ExpectOK(t, r, "CSR "+good+" approved")
	if !strings.Contains(r.ErrOut, "CSR "+foreignName+" of cluster cluster-b skipped: common name") {
		t.Errorf("accept did not skip cluster-b's request naming cluster-c:\n%s", r.ErrOut)
	}
	waitIssued(ctx, t, admin, good)
	expectPending(ctx, t, admin, foreignName, "labeled cluster-b, subject of cluster-c")

	// A request filed before its token was revoked is never approved:
	// cluster-b's agent files one, the administrator revokes cluster-b's
	// tokens, and accept, even with --rejoin, skips it.
	late := mustFileCSR(ctx, t, bound, agentCSR("cluster-b"))
	clitest.ExpectOK(t, ocm.Run(ctx, "hub", "token", "revoke", "--cluster-name", "cluster-b"))
	clitest.ExpectOK(t, ocm.Run(ctx, "hub", "token", "--cluster-name", "cluster-b", "-o", "json"))
	r = ocm.Run(ctx, "accept", "--clusters", "cluster-b", "--rejoin")
	clitest.ExpectOK(t, r)
	if !strings.Contains(r.ErrOut, "CSR "+late+" of cluster cluster-b skipped: it was filed with a token of ServiceAccount") {
		t.Errorf("accept did not skip the request filed with a revoked token:\n%s", r.ErrOut)
	}
	expectPending(ctx, t, admin, late, "filed with a token revoked since")

	// The shared token keeps working for any cluster, as in OCM.
	r = ocm.Run(ctx, "hub", "token", "-o", "json")
	clitest.ExpectOK(t, r)
	var shared hubcli.JoinInfo
	if err := json.Unmarshal([]byte(r.Out), &shared); err != nil || shared.ClusterName != "" {
		t.Fatalf("hub token -o json: %v (%s)", err, r.Out)
	}
	anyCluster := tokenClient(t, hubCluster, shared.HubToken)
	if err := anyCluster.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-c"}}); err != nil {
		t.Errorf("the shared token registers cluster-c: %v", err)
	}
	mustFileCSR(ctx, t, anyCluster, agentCSR("cluster-c"))
}

// boundTokenShared: the cluster-bound bootstrap identities hold the
// bootstrap role through one binding to their namespace's group, not a
// ClusterRoleBinding each (docs/design/authorization.md), and admission
// holds each to its own cluster: the token of cluster-d registers cluster-d
// and nothing of any other cluster, whatever the name's likeness; no other
// ServiceAccount that holds the role through the same group, and no
// ServiceAccount of the same name elsewhere, registers anything; and the
// token stays bound to cluster-d's name across the deletion and the
// re-creation of cluster-d.
func (fx *bootstrapFixture) boundTokenShared(t *testing.T) {
	ctx, hubCluster, admin, ocm := fx.ctx, fx.hub, fx.admin, fx.ocm
	var join hubcli.JoinInfo
	r := ocm.Run(ctx, "hub", "token", "--cluster-name", "cluster-d", "--duration", "1h", "-o", "json")
	clitest.ExpectOK(t, r)
	if err := json.Unmarshal([]byte(r.Out), &join); err != nil || join.HubToken == "" {
		t.Fatalf("hub token --cluster-name cluster-d -o json: %v (%s)", err, r.Out)
	}
	bound := tokenClient(t, hubCluster, join.HubToken)

	bindings := &rbacv1.ClusterRoleBindingList{}
	expectAllowed(t, "list ClusterRoleBindings", admin.List(ctx, bindings))
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && strings.HasPrefix(s.Name, identity.ClusterBootstrapServiceAccountPrefix) {
				t.Errorf("ClusterRoleBinding %s binds the cluster-bound ServiceAccount %s/%s: the bootstrap role is bound once, to group %s",
					b.Name, s.Namespace, s.Name, identity.ClusterBootstrapGroup)
			}
		}
	}
	expectAllowed(t, "cluster-d's bootstrap ServiceAccount", admin.Get(ctx,
		client.ObjectKey{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("cluster-d")}, &corev1.ServiceAccount{}))

	// Names like cluster-d's: a prefix of it, it with a suffix, with a
	// prefix, and another cluster's that exists.
	for _, other := range []string{"cluster", "cluster-d2", "cluster-dd", "xcluster-d", "d"} {
		expectDenied(t, "cluster-d's token registers "+other,
			bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: other}}), "may register managed cluster cluster-d only")
		if _, err := fileCSR(ctx, t, bound, agentCSR(other)); !apierrors.IsForbidden(err) {
			t.Errorf("cluster-d's token requests %s's certificate: %v, want Forbidden", other, err)
		}
	}
	x := &clusterv1.ManagedCluster{}
	expectAllowed(t, "read cluster-x", admin.Get(ctx, client.ObjectKey{Name: "cluster-x"}, x))
	x.Labels = map[string]string{"evil": "true"}
	expectForbidden(t, "cluster-d's token updates cluster-x", bound.Update(ctx, x, client.DryRunAll))
	expectForbidden(t, "cluster-d's token writes cluster-x's status", bound.Status().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-x"}},
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`)), client.DryRunAll))
	expectAllowed(t, "cluster-d's token registers cluster-d", bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-d"}}))
	expectForbidden(t, "cluster-d's token writes cluster-d's status", bound.Status().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-d"}},
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`)), client.DryRunAll))

	// Other subjects: every ServiceAccount of the namespace holds the
	// bootstrap role through its group, and admission refuses the writes
	// of those not named after a cluster; a ServiceAccount named like
	// cluster-d's in another namespace (as earlier releases made them, in
	// the operator's) holds nothing.
	named := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.ClusterBootstrapNamespace, Name: "cluster-e"}}
	expectAllowed(t, "create ServiceAccount cluster-e", admin.Create(ctx, named))
	for _, sa := range []client.ObjectKey{{Namespace: identity.ClusterBootstrapNamespace, Name: "default"}, client.ObjectKeyFromObject(named)} {
		cfg, err := hubCluster.ConfigForServiceAccount(ctx, sa.Namespace, sa.Name, time.Hour)
		c := clientFor(t, cfg, err)
		expectDenied(t, sa.String()+" registers cluster-e", c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-e"}}),
			"is no cluster-bound bootstrap identity")
		if _, err := fileCSR(ctx, t, c, agentCSR("cluster-e")); !apierrors.IsForbidden(err) {
			t.Errorf("%s requests cluster-e's certificate: %v, want Forbidden", sa, err)
		}
	}
	for _, ns := range []string{identity.BootstrapNamespace, metav1.NamespaceDefault} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: identity.ClusterBootstrapServiceAccount("cluster-d")}}
		expectAllowed(t, "create ServiceAccount "+ns+"/"+sa.Name, admin.Create(ctx, sa))
		cfg, err := hubCluster.ConfigForServiceAccount(ctx, ns, sa.Name, time.Hour)
		c := clientFor(t, cfg, err)
		expectForbidden(t, ns+"/"+sa.Name+" registers cluster-f", c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-f"}}))
		if _, err := fileCSR(ctx, t, c, agentCSR("cluster-d")); !apierrors.IsForbidden(err) {
			t.Errorf("%s/%s requests cluster-d's certificate: %v, want Forbidden", ns, sa.Name, err)
		}
	}

	// cluster-d deleted, then created again by the administrator: the
	// token is bound to the name, as before, and to nothing else.
	expectAllowed(t, "delete cluster-d", admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-d"}}))
	framework.Eventually(ctx, t, pollTimeout, "cluster-d deleted", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Name: "cluster-d"}, &clusterv1.ManagedCluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	expectAllowed(t, "the administrator creates cluster-d again", admin.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-d"}}))
	if err := bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-d"}}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("cluster-d's token creates cluster-d again: %v, want AlreadyExists (admitted, and the name taken)", err)
	}
	expectDenied(t, "cluster-d's token, cluster-d recreated, registers cluster-g",
		bound.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-g"}}), "may register managed cluster cluster-d only")
	if _, err := fileCSR(ctx, t, bound, agentCSR("cluster-x")); !apierrors.IsForbidden(err) {
		t.Errorf("cluster-d's token, cluster-d recreated, requests cluster-x's certificate: %v, want Forbidden", err)
	}
}
