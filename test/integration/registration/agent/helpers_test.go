package agent_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	clusterName = "cluster1"
	agentNS     = config.AgentNamespace
	// pollTimeout bounds every wait of the test.
	pollTimeout = 90 * time.Second
	// pollInterval is how often the fleet watch looks again.
	pollInterval = 200 * time.Millisecond
)

// applyAll applies objs to c.
func applyAll(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := apply.Apply(ctx, c, objs, apply.Options{FieldManager: "agent-test"}); err != nil {
		t.Fatal(err)
	}
}

// csrsOf lists the CSRs labeled with the cluster on the hub.
func csrsOf(ctx context.Context, hub client.Client) ([]certificatesv1.CertificateSigningRequest, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	err := hub.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: clusterName})
	return list.Items, err
}

// pendingCSRs returns the CSRs of the cluster that are neither approved nor denied.
func pendingCSRs(ctx context.Context, hub client.Client) ([]certificatesv1.CertificateSigningRequest, error) {
	all, err := csrsOf(ctx, hub)
	var out []certificatesv1.CertificateSigningRequest
	for _, csr := range all {
		if len(csr.Status.Conditions) == 0 {
			out = append(out, csr)
		}
	}
	return out, err
}

// approveCSR approves csr as the hub admin, as `kubectl ocm accept` does.
func approveCSR(ctx context.Context, t *testing.T, hub *framework.Cluster, csr *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "ApprovedByTest", Message: "approved by the test hub admin",
	})
	if _, err := hub.Clientset().CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("approve CSR %s: %v", csr.Name, err)
	}
}

// approveNextCSR waits for exactly one pending CSR of the cluster and approves it.
func approveNextCSR(ctx context.Context, t *testing.T, hub *framework.Cluster) string {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	framework.Eventually(ctx, t, pollTimeout, "a pending CSR of "+clusterName, func(ctx context.Context) (bool, error) {
		pending, err := pendingCSRs(ctx, hub.Client())
		if len(pending) == 1 {
			csr = &pending[0]
		}
		return len(pending) == 1, err
	})
	approveCSR(ctx, t, hub, csr)
	return csr.Name
}

// managedCluster reads the cluster's ManagedCluster on the hub.
func managedCluster(ctx context.Context, hub client.Client) (*clusterv1.ManagedCluster, error) {
	mc := &clusterv1.ManagedCluster{}
	return mc, hub.Get(ctx, types.NamespacedName{Name: clusterName}, mc)
}

// conditionTrue reports whether condition typ of the ManagedCluster is True.
func conditionTrue(ctx context.Context, hub client.Client, typ string) (bool, error) {
	mc, err := managedCluster(ctx, hub)
	if err != nil {
		return false, err
	}
	return meta.IsStatusConditionTrue(mc.Status.Conditions, typ), nil
}

// klusterletCondition returns condition typ of the Klusterlet, nil if unset.
func klusterletCondition(ctx context.Context, c client.Client, typ string) (*metav1.Condition, error) {
	k := &operatorv1.Klusterlet{}
	if err := c.Get(ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, k); err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(k.Status.Conditions, typ), nil
}

// hubSecret reads the hub kubeconfig Secret on the managed cluster.
func hubSecret(ctx context.Context, c client.Client) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, c.Get(ctx, types.NamespacedName{Namespace: agentNS, Name: operatorv1.HubKubeConfigSecret}, s)
}

// issueClientCert signs a client certificate for subject of key with the
// cluster's CA, valid from notBefore to notAfter, as the hub's signer would.
func issueClientCert(t *testing.T, cluster *framework.Cluster, pub crypto.PublicKey, cn string, orgs []string, notBefore, notAfter time.Time) []byte {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(cluster.Dir(), "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	caKeyPEM, err := os.ReadFile(filepath.Join(cluster.Dir(), "pki", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caCerts, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := certs.ParsePrivateKey(caKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: orgs}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCerts[0], pub, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// dumpCSRs logs the cluster's CSRs and whether each requester may renew the
// cluster's certificates, to explain a failed test.
func dumpCSRs(t *testing.T, hub *framework.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := csrsOf(ctx, hub.Client())
	if err != nil {
		t.Logf("list CSRs: %v", err)
		return
	}
	for _, csr := range all {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: csr.Spec.Username, Groups: csr.Spec.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: "register.open-cluster-management.io", Resource: "managedclusters",
				Subresource: "clientcertificates", Verb: "renew", Name: clusterName,
			},
		}}
		_ = hub.Client().Create(ctx, sar)
		t.Logf("CSR %s by %s %v: conditions %+v; may renew: %v %s", csr.Name, csr.Spec.Username, csr.Spec.Groups,
			csr.Status.Conditions, sar.Status.Allowed, sar.Status.Reason)
	}
}

// hubPins returns the CA pins of hubs as `kubectl ocm hub token` prints
// them, for join's --ca-cert-hash; it fails the test when a hub has none.
func hubPins(ctx context.Context, t *testing.T, hubs ...*framework.Cluster) []string {
	t.Helper()
	var pins []string
	for _, h := range hubs {
		p, err := hubcli.CAPins(ctx, h.Client(), h.RESTConfig())
		if err != nil || len(p) == 0 {
			t.Fatalf("the CA pins of hub %s: %v, %v; want at least one", h.Name, p, err)
		}
		pins = append(pins, p...)
	}
	return pins
}

// runAccept runs `kubectl ocm accept --clusters clusters --wait` on the hub
// of flags, waiting at most timeout, and returns its output (stdout, then
// stderr) and error.
func runAccept(ctx context.Context, t *testing.T, flags *genericclioptions.ConfigFlags, timeout time.Duration, clusters ...string) (string, error) {
	t.Helper()
	return runAcceptWith(ctx, t, flags, timeout, false, clusters...)
}

// runAcceptRejoin is runAccept with --rejoin: it approves the new
// registration of clusters whose agents joined before.
func runAcceptRejoin(ctx context.Context, t *testing.T, flags *genericclioptions.ConfigFlags, timeout time.Duration, clusters ...string) (string, error) {
	t.Helper()
	return runAcceptWith(ctx, t, flags, timeout, true, clusters...)
}

// runAcceptWith runs accept --wait, with --rejoin when rejoin is set.
func runAcceptWith(ctx context.Context, t *testing.T, flags *genericclioptions.ConfigFlags, timeout time.Duration, rejoin bool, clusters ...string) (string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	a := accept.NewOptions(flags, streams)
	a.Clusters, a.Wait, a.Timeout, a.Rejoin = clusters, true, timeout, rejoin
	if err := a.Complete(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	err := a.Run(ctx)
	return out.String() + errOut.String(), err
}

// mustAccept is runAccept with a 2-minute wait, failing t on an error.
func mustAccept(ctx context.Context, t *testing.T, flags *genericclioptions.ConfigFlags, clusters ...string) {
	t.Helper()
	if out, err := runAccept(ctx, t, flags, 2*time.Minute, clusters...); err != nil {
		t.Fatalf("accept: %v\noutput:\n%s", err, out)
	}
}

// setLease sets spec.leaseDurationSeconds of the clusters on hub.
func setLease(ctx context.Context, t *testing.T, hub client.Client, seconds int, clusters ...string) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, seconds))
	for _, name := range clusters {
		if err := hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, patch); err != nil {
			t.Fatal(err)
		}
	}
}
