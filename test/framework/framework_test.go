package framework

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// whoAmI returns the user the API server sees for cfg.
func whoAmI(ctx context.Context, cfg *rest.Config) (authenticationv1.UserInfo, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

func TestEnvironment(t *testing.T) {
	SkipIfShort(t)
	env := StartForTest(t, "hub", "cluster1", "cluster2")
	ctx := t.Context()

	t.Run("kubeconfig has a working context per cluster", func(t *testing.T) {
		raw, err := clientcmd.LoadFromFile(env.Kubeconfig())
		require.NoError(t, err)
		assert.Equal(t, "hub", raw.CurrentContext)
		for _, c := range env.Clusters() {
			cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, c.Name, nil, nil).ClientConfig()
			require.NoError(t, err)
			assert.Equal(t, c.Server(), cfg.Host)
			user, err := whoAmI(ctx, cfg)
			require.NoError(t, err, "context %s", c.Name)
			assert.Equal(t, AdminUser, user.Username)
		}
	})

	t.Run("clusters do not share objects", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-on-cluster1"}}
		_, err := env.Cluster("cluster1").Clientset().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = env.Cluster("cluster2").Clientset().CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "namespace created on cluster1 is visible on cluster2: %v", err)
	})

	for _, c := range env.Clusters() {
		t.Run(c.Name, func(t *testing.T) {
			t.Run("client CSR is approved then signed by the controller manager", func(t *testing.T) { testCSRSigning(t, c) })
			t.Run("deleted namespace goes away", func(t *testing.T) { testNamespaceDeletion(t, c) })
			t.Run("ServiceAccount token authenticates and RBAC denies", func(t *testing.T) { testServiceAccountAndRBAC(t, c) })
		})
	}
	t.Run("bootstrap token authenticates", func(t *testing.T) { testBootstrapToken(t, env.Cluster("hub")) })
	t.Run("the aggregation layer is configured", func(t *testing.T) {
		// What an aggregated API server reads to verify the requests the
		// API server proxies to it.
		cm, err := env.Cluster("hub").Clientset().CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		require.NoError(t, err)
		block, _ := pem.Decode([]byte(cm.Data["requestheader-client-ca-file"]))
		require.NotNil(t, block, "no requestheader-client-ca-file in %v", cm.Data)
		ca, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		assert.Equal(t, "hub-front-proxy-ca", ca.Subject.CommonName)
		assert.Equal(t, `["`+FrontProxyClient+`"]`, cm.Data["requestheader-allowed-names"])
		assert.Equal(t, `["X-Remote-User"]`, cm.Data["requestheader-username-headers"])
	})
}

func testCSRSigning(t *testing.T, c *Cluster) {
	ctx := t.Context()
	const user = "system:open-cluster-management:cluster1:agent1"
	groups := []string{"system:open-cluster-management:cluster1", "system:open-cluster-management:managed-clusters"}
	leaf, certPEM, keyPEM := signClientCSR(t, c, user, groups...)
	assert.Equal(t, user, leaf.Subject.CommonName)
	assert.ElementsMatch(t, groups, leaf.Subject.Organization)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: c.ca.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err, "signed certificate does not chain to the cluster CA")

	// The issued certificate authenticates as the identity it names.
	cfg := c.configWith(rest.TLSClientConfig{CertData: certPEM, KeyData: keyPEM})
	info, err := whoAmI(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, user, info.Username)
	assert.Subset(t, info.Groups, groups)
}

// signClientCSR files a kube-apiserver-client CertificateSigningRequest for
// user and groups on c, approves it, waits for the controller manager to
// sign it, and returns the certificate, parsed and PEM, and its key.
func signClientCSR(t *testing.T, c *Cluster, user string, groups ...string) (leaf *x509.Certificate, certPEM, keyPEM []byte) {
	t.Helper()
	cs := c.Clientset()
	name, keyPEM := approvedClientCSR(t, c, user, groups...)
	Eventually(t.Context(), t, 30*time.Second, "CSR "+name+" to be signed", func(ctx context.Context) (bool, error) {
		got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, nil
	})
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block, "status.certificate is not PEM")
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return leaf, certPEM, keyPEM
}

// approvedClientCSR creates and approves a kube-apiserver client
// CertificateSigningRequest for user in groups, returning its name and the
// private key.
func approvedClientCSR(t *testing.T, c *Cluster, user string, groups ...string) (name string, keyPEM []byte) {
	t.Helper()
	ctx := t.Context()
	cs := c.Clientset()
	key, keyPEM, err := certs.NewPrivateKey()
	require.NoError(t, err)
	csrPEM, err := certutil.MakeCSR(key, &pkix.Name{CommonName: user, Organization: groups}, nil, nil)
	require.NoError(t, err)
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "cluster1-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    csrPEM,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}
	csr, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	require.NoError(t, err)

	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "TestApproved", Message: "approved by the framework test",
	})
	_, err = cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	require.NoError(t, err)
	return csr.Name, keyPEM
}

func testNamespaceDeletion(t *testing.T, c *Cluster) {
	ctx := t.Context()
	cs := c.Clientset()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}
	_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content", Namespace: ns.Name}, Data: map[string]string{"k": "v"}}
	_, err = cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}))
	Eventually(t.Context(), t, 60*time.Second, "namespace doomed to be removed", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func testServiceAccountAndRBAC(t *testing.T, c *Cluster) {
	ctx := t.Context()
	cs := c.Clientset()
	const nsName, saName = "rbac-test", "reader"
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().ServiceAccounts(nsName).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: saName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg, err := c.ConfigForServiceAccount(ctx, nsName, saName, 10*time.Minute)
	require.NoError(t, err)
	info, err := whoAmI(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("system:serviceaccount:%s:%s", nsName, saName), info.Username)

	sa := kubernetes.NewForConfigOrDie(cfg)
	_, err = sa.CoreV1().ConfigMaps(nsName).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "a ServiceAccount with no role can list configmaps: %v", err)

	_, err = cs.RbacV1().Roles(nsName).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(nsName).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: nsName, Name: saName}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// The RBAC authorizer works from an informer cache: poll until the grant is seen.
	Eventually(t.Context(), t, 10*time.Second, "the RoleBinding to take effect", func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(nsName).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	_, err = sa.CoreV1().Secrets(nsName).List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "granted configmaps, but secrets are readable too: %v", err)
	_, err = sa.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "granted configmaps in %s, but kube-system is readable too: %v", nsName, err)
	_, err = sa.CoreV1().ConfigMaps(nsName).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "granted get/list, but create is allowed too: %v", err)
}

func testBootstrapToken(t *testing.T, c *Cluster) {
	ctx := t.Context()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": "abcdef", "token-secret": "0123456789abcdef",
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              "system:bootstrappers:managedcluster",
			"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}
	_, err := c.Clientset().CoreV1().Secrets("kube-system").Create(ctx, secret, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := c.configWith(rest.TLSClientConfig{})
	cfg.BearerToken = "abcdef.0123456789abcdef"
	var info authenticationv1.UserInfo
	Eventually(t.Context(), t, 10*time.Second, "the bootstrap token to authenticate", func(ctx context.Context) (bool, error) {
		info, err = whoAmI(ctx, cfg)
		return err == nil, nil
	})
	assert.Equal(t, "system:bootstrap:abcdef", info.Username)
	assert.Contains(t, info.Groups, "system:bootstrappers:managedcluster")
}

func TestStopLeavesNoProcess(t *testing.T) {
	SkipIfShort(t)
	env, err := Start(t.Context(), Options{Clusters: []string{"one"}, Log: testWriter{t}})
	require.NoError(t, err)
	pids := []int{env.etcd.Pid()}
	for _, p := range env.Cluster("one").procs {
		pids = append(pids, p.Pid())
	}
	dir := env.Dir()
	require.NoError(t, env.Stop())
	require.NoError(t, env.Stop(), "a second Stop must be a no-op")
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "process %d still exists after Stop", pid)
	}
	assert.NoDirExists(t, dir, "Stop must remove the directory it created")
}

func TestStartRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"invalid name", Options{Clusters: []string{"Hub_1"}, BinDir: t.TempDir()}, "not a DNS label"},
		{"duplicate name", Options{Clusters: []string{"a", "a"}, BinDir: t.TempDir()}, "given twice"},
		{"missing binaries", Options{Clusters: []string{"a"}, BinDir: t.TempDir()}, "make kube-bins"},
		{"previous release of an unknown cluster", Options{Clusters: []string{"a"}, Previous: []string{"b"}, BinDir: t.TempDir()}, `cluster "b" is in Options.Previous but not in Options.Clusters`},
		{"priority and fairness for an unknown cluster", Options{Clusters: []string{"a"}, PriorityAndFairness: []string{"b"}, BinDir: t.TempDir()}, `cluster "b" is in Options.PriorityAndFairness but not in Options.Clusters`},
		{"profiling for an unknown cluster", Options{Clusters: []string{"a"}, Profiling: []string{"c"}, BinDir: t.TempDir()}, `cluster "c" is in Options.Profiling but not in Options.Clusters`},
		{"previous release not built", Options{Clusters: []string{"a"}, Previous: []string{"a"}, BinDir: fakeBinDir(t)}, "previous Kubernetes release not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(t.Context(), tt.opts)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// fakeBinDir returns a directory holding files named as the current
// release's control-plane binaries, and nothing else.
func fakeBinDir(t *testing.T) string {
	dir := t.TempDir()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, b), nil, 0o755))
	}
	return dir
}

func TestRestartAPIServer(t *testing.T) {
	SkipIfShort(t)
	env, c, cs := startWithKept(t)
	before := c.apiserver.Pid()
	server := c.Server()

	require.NoError(t, c.RestartAPIServer(t.Context()))
	assert.ErrorIs(t, syscall.Kill(before, 0), syscall.ESRCH, "the old API server still runs")
	assert.Equal(t, server, c.Server(), "the API server moved")
	_, err := cs.CoreV1().Namespaces().Get(t.Context(), "kept", metav1.GetOptions{})
	require.NoError(t, err, "an object written before the restart is gone, or the old client cannot reach the new server")

	after := c.apiserver.Pid()
	require.NoError(t, env.Stop())
	assert.ErrorIs(t, syscall.Kill(after, 0), syscall.ESRCH, "Stop left the restarted API server running")
}
