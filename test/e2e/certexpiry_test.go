package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// certLifetime is how long the hub signs client certificates for in
// TestClientCertificateRotation. The controller manager backdates each
// certificate by five minutes, and the agent rotates once less than a
// fifth to a quarter of the whole validity remains, so a certificate is
// rotated 15 to 36 seconds after it is issued.
const certLifetime = 2 * time.Minute

// testClientCertificateRotation joins cluster1 to a hub that signs short
// client certificates and keeps creating and updating ManifestWorks while
// the agent rotates its certificate twice. Every work applies, the cluster
// stays Available all along, and the agent keeps talking to the hub with
// each new certificate.
func testClientCertificateRotation(t *testing.T) {
	parallel(t)
	f := startFleetWith(t, framework.Options{Clusters: []string{"hub", "cluster1"}, ClusterSigningDuration: certLifetime})
	env := f.env
	f.joinAll(t, "cluster1")
	hub := env.Cluster("hub").Client()
	managed := env.Cluster("cluster1").Client()
	ctx := t.Context()
	available := watchAvailable(t, env.Cluster("hub"), "cluster1")

	first := agentCertificate(t, managed)
	t.Logf("first client certificate: serial %s, valid %s to %s", first.SerialNumber, first.NotBefore.UTC(), first.NotAfter.UTC())
	serial := first.SerialNumber.String()
	var rotations []time.Duration
	start := time.Now()
	// Each certificate must be replaced before it expires: its own NotAfter
	// is the deadline, whatever the machine's load.
	expires := first.NotAfter
	applied, appliedSinceRotation := 0, 0
	// Works flow until two rotations happened and a work applied after the last.
	for i := 0; len(rotations) < 2 || appliedSinceRotation == 0; i++ {
		if now := agentCertificate(t, managed); now.SerialNumber.String() != serial {
			serial, expires = now.SerialNumber.String(), now.NotAfter
			rotations = append(rotations, time.Since(start))
			appliedSinceRotation = 0
			t.Logf("client certificate rotated after %s: serial %s, valid to %s", time.Since(start).Round(time.Millisecond), serial, now.NotAfter.UTC())
		}
		require.True(t, time.Now().Before(expires), "client certificate %s expired at %s before the agent rotated it (%d rotations in %s)",
			serial, expires.UTC(), len(rotations), time.Since(start))
		name := fmt.Sprintf("rotation-%d", i%3)
		mw := configMapWork("cluster1", name, 1, fmt.Sprint("v", i))
		if i < 3 {
			require.NoError(t, hub.Create(ctx, mw))
		} else {
			live := &workv1.ManifestWork{}
			require.NoError(t, hub.Get(ctx, client.ObjectKeyFromObject(mw), live))
			base := live.DeepCopy()
			live.Spec = mw.Spec
			require.NoError(t, hub.Patch(ctx, live, client.MergeFrom(base)))
		}
		waitWorkApplied(t, hub, "cluster1", name, time.Minute)
		framework.Eventually(t.Context(), t, time.Minute, "ConfigMap "+name+"-0 at v"+fmt.Sprint(i)+" on cluster1", func(ctx context.Context) (bool, error) {
			cm := &corev1.ConfigMap{}
			err := managed.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-0"}, cm)
			return err == nil && cm.Data["version"] == fmt.Sprint("v", i), client.IgnoreNotFound(err)
		})
		applied++
		appliedSinceRotation++
	}
	transitions := available.transitions()
	assert.Empty(t, transitions, "cluster1 left Available during the rotations")
	mc := &clusterv1.ManagedCluster{}
	require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc))
	assert.True(t, meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable))
	t.Logf("fault=cert-expiry signing-duration=%s validity=%s rotations=%d rotated-at=%v works-applied=%d available-transitions=%d",
		certLifetime, first.NotAfter.Sub(first.NotBefore), len(rotations), rounded(rotations), applied, len(transitions))
}

// agentCertificate returns the client certificate in the agent's hub
// kubeconfig Secret on the managed cluster.
func agentCertificate(t *testing.T, managed client.Client) *x509.Certificate {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, managed.Get(t.Context(), client.ObjectKey{Namespace: "open-cluster-management-agent", Name: operatorv1.HubKubeConfigSecret}, s))
	block, _ := pem.Decode(s.Data[kubeconfig.TLSCertKey])
	require.NotNil(t, block, "the hub kubeconfig Secret holds no PEM certificate")
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

// availableLog records every change of a ManagedCluster's Available
// condition away from True.
type availableLog struct {
	mu   sync.Mutex
	seen []string
}

// transitions returns the changes seen, as "status reason".
func (l *availableLog) transitions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// watchAvailable watches the ManagedCluster name on the hub until t ends and
// records every version whose Available condition is not True.
func watchAvailable(t *testing.T, hub *framework.Cluster, name string) *availableLog {
	t.Helper()
	c, err := client.NewWithWatch(hub.RESTConfig(), client.Options{Scheme: apis.Scheme})
	require.NoError(t, err)
	w, err := c.Watch(t.Context(), &clusterv1.ManagedClusterList{}, &client.ListOptions{Raw: &metav1.ListOptions{FieldSelector: "metadata.name=" + name}})
	require.NoError(t, err)
	l := &availableLog{}
	done := make(chan struct{})
	t.Cleanup(func() { w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mc, ok := ev.Object.(*clusterv1.ManagedCluster)
			if !ok {
				continue
			}
			if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
				l.mu.Lock()
				l.seen = append(l.seen, fmt.Sprintf("%s at %s: %v", ev.Type, time.Now().UTC().Format(time.RFC3339), c))
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// rounded rounds each duration to the millisecond.
func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
