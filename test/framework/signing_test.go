package framework

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
