package agent

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	ocmidentity "github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

var testNow = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// credentialData builds hub kubeconfig Secret data for id on server with a
// self-signed certificate valid until notAfter.
func credentialData(t *testing.T, id identity, server string, notAfter time.Time) map[string][]byte {
	t.Helper()
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: id.subject(), NotBefore: testNow.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	data, err := hubSecretData(id, &kubeconfig.Info{Server: server, CAData: []byte("CA")}, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tokenData returns the hub kubeconfig Secret's data of id with a token of
// ServiceAccount ns/name, expiring at exp (unsigned: the
// agent reads its claims, the hub verifies it).
func tokenData(t *testing.T, id identity, ns, name string, exp time.Time) map[string][]byte {
	t.Helper()
	claims, err := json.Marshal(map[string]any{
		"iat": exp.Add(-time.Hour).Unix(), "exp": exp.Unix(),
		"kubernetes.io": map[string]any{"namespace": ns, "serviceaccount": map[string]any{"name": name, "uid": "u1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	token := "e30." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
	data, err := hubTokenSecretData(id, &kubeconfig.Info{Server: "https://hub", CAData: []byte("CA")}, []byte(token))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCheckHubCredential(t *testing.T) {
	id := identity{cluster: "c1", agentID: "abcde"}
	bootstrap := &kubeconfig.Info{Server: "https://hub", CAData: []byte("CA"), Token: "t"}
	valid := credentialData(t, id, "https://hub", testNow.Add(time.Hour))
	without := func(key string) map[string][]byte {
		d := credentialData(t, id, "https://hub", testNow.Add(time.Hour))
		delete(d, key)
		return d
	}
	corrupted := credentialData(t, id, "https://hub", testNow.Add(time.Hour))
	corrupted[kubeconfig.TLSCertKey] = []byte("garbage")
	// OCM's agent writes a kubeconfig that names tls.crt and tls.key by file.
	ocm := credentialData(t, id, "https://hub", testNow.Add(time.Hour))
	ocm[kubeconfig.KubeconfigKey] = []byte(`apiVersion: v1
kind: Config
current-context: default-context
contexts: [{name: default-context, context: {cluster: hub, user: default-auth}}]
clusters: [{name: hub, cluster: {server: "https://hub", certificate-authority-data: Q0E=}}]
users: [{name: default-auth, user: {client-certificate: tls.crt, client-key: tls.key}}]
`)
	tokenNS := ocmidentity.AgentTokenNamespace
	tests := []struct {
		name            string
		token           bool
		data            map[string][]byte
		id              identity
		bootstrap       *kubeconfig.Info
		wantErrContains string
	}{
		{name: "valid", data: valid, id: id, bootstrap: bootstrap},
		{name: "valid without a bootstrap kubeconfig", data: valid, id: id},
		{name: "OCM's Secret", data: ocm, id: id, bootstrap: bootstrap},
		{name: "no kubeconfig", data: without(kubeconfig.KubeconfigKey), id: id, bootstrap: bootstrap, wantErrContains: "key kubeconfig is missing"},
		{name: "no certificate", data: without(kubeconfig.TLSCertKey), id: id, bootstrap: bootstrap, wantErrContains: "key tls.crt is missing"},
		{name: "no key", data: without(kubeconfig.TLSKeyKey), id: id, bootstrap: bootstrap, wantErrContains: "key tls.key is missing"},
		{name: "corrupted certificate", data: corrupted, id: id, bootstrap: bootstrap, wantErrContains: "parse certificate"},
		{name: "expired", data: credentialData(t, id, "https://hub", testNow.Add(-time.Minute)), id: id, bootstrap: bootstrap, wantErrContains: "expired"},
		{name: "other agent", data: valid, id: identity{cluster: "c1", agentID: "zzzzz"}, bootstrap: bootstrap, wantErrContains: "not \"system:open-cluster-management:c1:zzzzz\""},
		{name: "other hub", data: credentialData(t, id, "https://old-hub", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap, wantErrContains: "points at https://old-hub"},
		{name: "other CA", data: valid, id: id, bootstrap: &kubeconfig.Info{Server: "https://hub", CAData: []byte("CA2")}, wantErrContains: "bootstrap kubeconfig points at"},
		{name: "token", token: true, data: tokenData(t, id, tokenNS, "c1", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap},
		{name: "token of an earlier hub's ServiceAccount in the cluster namespace", token: true, data: tokenData(t, id, "c1", "klusterlet", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap},
		{name: "token of another cluster's ServiceAccount", token: true, data: tokenData(t, id, tokenNS, "c2", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap,
			wantErrContains: "not " + tokenNS + "/c1"},
		{name: "token of an earlier hub's ServiceAccount of another cluster", token: true, data: tokenData(t, id, "c2", "klusterlet", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap,
			wantErrContains: "not " + tokenNS + "/c1"},
		{name: "token of another ServiceAccount of the cluster namespace", token: true, data: tokenData(t, id, "c1", "default", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap,
			wantErrContains: "not " + tokenNS + "/c1"},
		{name: "expired token", token: true, data: tokenData(t, id, tokenNS, "c1", testNow.Add(-time.Second)), id: id, bootstrap: bootstrap, wantErrContains: "expired"},
		{name: "expired token of an earlier hub", token: true, data: tokenData(t, id, "c1", "klusterlet", testNow.Add(-time.Second)), id: id, bootstrap: bootstrap, wantErrContains: "expired"},
		{name: "token of another agent", token: true, data: tokenData(t, id, tokenNS, "c1", testNow.Add(time.Hour)), id: identity{cluster: "c1", agentID: "zzzzz"},
			bootstrap: bootstrap, wantErrContains: `not "zzzzz"`},
		{name: "certificate where a token is wanted", token: true, data: valid, id: id, bootstrap: bootstrap, wantErrContains: "carries no token"},
		{name: "token where a certificate is wanted", data: tokenData(t, id, tokenNS, "c1", testNow.Add(time.Hour)), id: id, bootstrap: bootstrap, wantErrContains: "key tls.crt is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := checkHubCredential(tt.data, tt.id, tt.token, tt.bootstrap, testNow)
			if tt.wantErrContains == "" {
				if err != nil || cred.config.Host != "https://hub" {
					t.Fatalf("checkHubCredential = %v, %v; want a credential for https://hub", cred, err)
				}
				return
			}
			assert.ErrorContains(t, err, tt.wantErrContains)
		})
	}
}

func TestHubSecretDataKeys(t *testing.T) {
	data := credentialData(t, identity{cluster: "c1", agentID: "a"}, "https://hub", testNow.Add(time.Hour))
	for _, key := range []string{kubeconfig.KubeconfigKey, kubeconfig.TLSCertKey, kubeconfig.TLSKeyKey, kubeconfig.ClusterNameKey, kubeconfig.AgentNameKey} {
		if len(data[key]) == 0 {
			t.Errorf("hub Secret data lacks %s", key)
		}
	}
	if string(data[kubeconfig.ClusterNameKey]) != "c1" || string(data[kubeconfig.AgentNameKey]) != "a" {
		t.Errorf("cluster-name %q agent-name %q", data[kubeconfig.ClusterNameKey], data[kubeconfig.AgentNameKey])
	}
}

// claim builds a ClusterClaim.
func claim(name string, spokeOnly bool) clusterv1alpha1.ClusterClaim {
	c := clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "v-" + name}}
	if spokeOnly {
		c.Labels = map[string]string{clusterv1alpha1.ClusterClaimSpokeOnlyLabel: "true"}
	}
	return c
}

func TestSelectClaims(t *testing.T) {
	tests := []struct {
		name          string
		claims        []clusterv1alpha1.ClusterClaim
		max           int
		suffixes      []string
		synthesized   []string
		want          []string
		wantTruncated int
	}{
		{name: "none", max: 20},
		{name: "reserved first, each sorted", claims: []clusterv1alpha1.ClusterClaim{claim("zone", false), claim("platform.open-cluster-management.io", false), claim("app", false), claim("id.k8s.io", false)},
			max: 20, want: []string{"id.k8s.io", "platform.open-cluster-management.io", "app", "zone"}},
		{name: "spoke-only hidden", claims: []clusterv1alpha1.ClusterClaim{claim("secret", true), claim("app", false)}, max: 20, want: []string{"app"}},
		{name: "custom truncated, reserved kept", claims: []clusterv1alpha1.ClusterClaim{claim("c", false), claim("b", false), claim("a", false), claim("id.k8s.io", false)},
			max: 2, want: []string{"id.k8s.io", "a", "b"}, wantTruncated: 1},
		{name: "zero custom", claims: []clusterv1alpha1.ClusterClaim{claim("a", false), claim("id.k8s.io", false)}, max: 0, want: []string{"id.k8s.io"}, wantTruncated: 1},
		{name: "synthesized reserved, not counted, replacing a ClusterClaim", claims: []clusterv1alpha1.ClusterClaim{claim("b", false), claim("a", false), claim("id.k8s.io", false), claim("agentversion.kubectl-ocm.io", false)},
			max: 1, synthesized: []string{"agentversion.kubectl-ocm.io"}, want: []string{"agentversion.kubectl-ocm.io", "id.k8s.io", "a"}, wantTruncated: 1},
		{name: "reserved suffixes: reported first, not counted", claims: []clusterv1alpha1.ClusterClaim{claim("b", false), claim("a", false),
			claim("region.example.com", false), claim("zone.example.org", false), claim("example.com", false), claim("id.k8s.io", false)},
			max: 1, suffixes: []string{".example.com", "zone.example.org"},
			want: []string{"id.k8s.io", "region.example.com", "zone.example.org", "a"}, wantTruncated: 2},
		{name: "reserved suffix of a spoke-only claim: hidden", claims: []clusterv1alpha1.ClusterClaim{claim("x.example.com", true)},
			max: 20, suffixes: []string{".example.com"}},
		{name: "empty suffix matches nothing", claims: []clusterv1alpha1.ClusterClaim{claim("b", false), claim("a", false)},
			max: 1, suffixes: []string{""}, want: []string{"a"}, wantTruncated: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var synthesized []clusterv1.ManagedClusterClaim
			for _, name := range tt.synthesized {
				synthesized = append(synthesized, clusterv1.ManagedClusterClaim{Name: name, Value: "s-" + name})
			}
			got, truncated := selectClaims(tt.claims, tt.max, tt.suffixes, synthesized...)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
				want := "v-" + c.Name
				if slices.Contains(tt.synthesized, c.Name) {
					want = "s-" + c.Name
				}
				if c.Value != want {
					t.Errorf("claim %s has value %q", c.Name, c.Value)
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") || truncated != tt.wantTruncated {
				t.Errorf("selectClaims = %v (%d truncated), want %v (%d)", names, truncated, tt.want, tt.wantTruncated)
			}
		})
	}
}

// node builds a Node with the given CPU and memory.
func node(cpu, mem string, unschedulable bool) corev1.Node {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.Node{Spec: corev1.NodeSpec{Unschedulable: unschedulable}, Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl}}
}

func TestSumResources(t *testing.T) {
	tests := []struct {
		name                              string
		nodes                             []corev1.Node
		wantCPU, wantAllocCPU, wantMemory string
	}{
		{"no nodes", nil, "0", "0", "0"},
		{"one node", []corev1.Node{node("4", "8Gi", false)}, "4", "4", "8Gi"},
		{"unschedulable node counts in capacity only", []corev1.Node{node("4", "8Gi", false), node("2", "4Gi", true)}, "6", "4", "12Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			capacity, alloc := sumResources(tt.nodes)
			cpu, acpu, mem := capacity[clusterv1.ResourceCPU], alloc[clusterv1.ResourceCPU], capacity[clusterv1.ResourceMemory]
			if cpu.Cmp(resource.MustParse(tt.wantCPU)) != 0 || acpu.Cmp(resource.MustParse(tt.wantAllocCPU)) != 0 || mem.Cmp(resource.MustParse(tt.wantMemory)) != 0 {
				t.Errorf("capacity cpu %s memory %s, allocatable cpu %s; want %s %s %s", cpu.String(), mem.String(), acpu.String(), tt.wantCPU, tt.wantMemory, tt.wantAllocCPU)
			}
		})
	}
}

func TestAvailability(t *testing.T) {
	failure := errors.New("connection refused")
	tests := []struct {
		name       string
		err        error
		since      time.Time
		wantStatus metav1.ConditionStatus // "" means keep the current condition
		wantSince  time.Time
	}{
		{name: "healthy", wantStatus: metav1.ConditionTrue},
		{name: "healthy again", since: testNow.Add(-time.Minute), wantStatus: metav1.ConditionTrue},
		{name: "first failure", err: failure, wantSince: testNow},
		{name: "failing for 19s", err: failure, since: testNow.Add(-19 * time.Second), wantSince: testNow.Add(-19 * time.Second)},
		{name: "failing for 20s", err: failure, since: testNow.Add(-20 * time.Second), wantStatus: metav1.ConditionFalse, wantSince: testNow.Add(-20 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, since := availability(tt.err, testNow, tt.since)
			got := metav1.ConditionStatus("")
			if c != nil {
				got = c.Status
				if c.Status == metav1.ConditionFalse && c.Reason != clusterv1.ReasonManagedClusterKubeAPIServerUnavailable {
					t.Errorf("reason %s", c.Reason)
				}
			}
			if got != tt.wantStatus || !since.Equal(tt.wantSince) {
				t.Errorf("availability = %q since %s, want %q since %s", got, since, tt.wantStatus, tt.wantSince)
			}
		})
	}
}

func TestRenewInterval(t *testing.T) {
	for _, tt := range []struct {
		seconds int32
		want    time.Duration
	}{{0, 60 * time.Second}, {60, 60 * time.Second}, {8, 8 * time.Second}} {
		if got := renewInterval(tt.seconds); got != tt.want {
			t.Errorf("renewInterval(%d) = %s, want %s", tt.seconds, got, tt.want)
		}
	}
}

func TestNewCSR(t *testing.T) {
	csr := newCSR(identity{cluster: "c1", agentID: "a"}, []byte("REQ"), certificatesv1.KubeAPIServerClientSignerName, 3600)
	if csr.GenerateName != "c1-" || csr.Labels[clusterv1.ClusterNameLabelKey] != "c1" ||
		csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || *csr.Spec.ExpirationSeconds != 3600 || len(csr.Spec.Usages) != 3 {
		t.Errorf("unexpected CSR %+v", csr)
	}
	if newCSR(identity{cluster: "c1", agentID: "a"}, nil, certs.AgentTokenSignerName, 0).Spec.ExpirationSeconds != nil {
		t.Error("expirationSeconds set although none was requested")
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name            string
		opts            Options
		wantErrContains string
	}{
		{name: "valid", opts: Options{Namespace: "ns", ClusterName: "c1"}},
		{name: "token driver", opts: Options{Namespace: "ns", RegistrationAuth: "token"}},
		{name: "unknown driver", opts: Options{Namespace: "ns", RegistrationAuth: "awsirsa"}, wantErrContains: `--registration-auth "awsirsa" is not one of csr, token`},
		{name: "no namespace", opts: Options{}, wantErrContains: "POD_NAMESPACE"},
		{name: "bad cluster name", opts: Options{Namespace: "ns", ClusterName: "C_1"}, wantErrContains: "invalid --cluster-name"},
		{name: "reserved cluster name", opts: Options{Namespace: "ns", ClusterName: "kube-system"}, wantErrContains: `invalid --cluster-name: cluster name "kube-system" is reserved`},
		{name: "shared role's name", opts: Options{Namespace: "ns", ClusterName: "registration"}, wantErrContains: `cluster name "registration" is reserved`},
		{name: "short certificate", opts: Options{Namespace: "ns", ClientCertExpirationSeconds: 3599}, wantErrContains: "minimum of 3600"},
		{name: "an hour", opts: Options{Namespace: "ns", ClientCertExpirationSeconds: 3600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Default()
			err := tt.opts.Validate()
			if tt.wantErrContains == "" {
				assert.NoError(t, err, "Validate")
			} else {
				assert.ErrorContains(t, err, tt.wantErrContains, "Validate")
			}
		})
	}
}

func TestQuickPoller(t *testing.T) {
	p := quickPoller{first: csrFirstPollInterval, max: csrPollInterval}
	var got []time.Duration
	for range 6 {
		got = append(got, p.next("a"))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("waits for one key = %v, want %v", got, want)
	}
	if d := p.next("b"); d != csrFirstPollInterval {
		t.Errorf("a new key starts at %v, want %v", d, csrFirstPollInterval)
	}
}

func TestSignerChanged(t *testing.T) {
	key, _, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	ca := func(serial int64) *x509.Certificate {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign, NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	oldCA := ca(1)
	otherKey, _, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "new"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, otherKey.Public(), otherKey)
	if err != nil {
		t.Fatal(err)
	}
	newCA2, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "agent"}, NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(time.Hour)}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, oldCA, otherKey.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatal(err)
	}
	now := testNow
	a := &Agent{now: func() time.Time { return now }}
	if a.signerChanged(leaf, nil) {
		t.Error("no announcement: no renewal")
	}
	if a.signerChanged(leaf, []*x509.Certificate{oldCA}) {
		t.Error("the announced CA signed the certificate: no renewal")
	}
	if !a.signerChanged(leaf, []*x509.Certificate{newCA2}) {
		t.Error("another CA announced: renew")
	}
	// The hub issued the renewal with the old CA: not again at once.
	a.signerRetry = now.Add(signerRetryInterval)
	if a.signerChanged(leaf, []*x509.Certificate{newCA2}) {
		t.Error("within the retry interval: no renewal")
	}
	now = now.Add(signerRetryInterval)
	if !a.signerChanged(leaf, []*x509.Certificate{newCA2}) {
		t.Error("after the retry interval: renew")
	}
}
