package framework

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterSigningDuration checks Options.ClusterSigningDuration: the
// controller manager signs client certificates that live no longer than it,
// shorter than the 600 seconds a CertificateSigningRequest may ask for.
func TestClusterSigningDuration(t *testing.T) {
	SkipIfShort(t)
	const lifetime = 90 * time.Second
	env := StartForTestWith(t, Options{Clusters: []string{"hub"}, ClusterSigningDuration: lifetime})
	requested := time.Now()
	leaf, _, _ := signClientCSR(t, env.Cluster("hub"), "short-lived")
	assert.WithinDuration(t, requested.Add(lifetime), leaf.NotAfter, 30*time.Second, "the certificate expires at %v", leaf.NotAfter)
	t.Logf("signing duration %v: certificate valid from %v to %v", lifetime, leaf.NotBefore, leaf.NotAfter)
}

// TestNoClientSigning checks Options.NoClientSigning: the cluster's
// controller manager signs nothing, so an approved client request stays
// without a certificate (on a signing cluster it has one within a second),
// while the rest of the controller manager works.
func TestNoClientSigning(t *testing.T) {
	SkipIfShort(t)
	env := StartForTestWith(t, Options{Clusters: []string{"hub"}, NoClientSigning: []string{"hub"}})
	hub := env.Cluster("hub")
	name, _ := approvedClientCSR(t, hub, "unsigned")
	cs := hub.Clientset()
	Consistently(t.Context(), t, 10*time.Second, "approved CSR "+name+" without a certificate", func(ctx context.Context) (bool, error) {
		got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(got.Status.Certificate) == 0, nil
	})
	// The other controllers run: the root CA publisher gave every namespace
	// its ConfigMap, and a ServiceAccount token can be requested.
	_, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
	require.NoError(t, err, "the root CA publisher runs")
	testServiceAccountAndRBAC(t, hub)
}
