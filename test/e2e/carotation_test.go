package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

// rotationLease is the lease duration of the rotated hub's cluster: it
// would be shown Unknown 2 of them after its last renewal. A renewal that
// falls due while the hub API server restarts waits out the restart, which
// took over 20 s under make test's load (test/integration/registration/agent
// saw a 39 s gap with 15 s leases): 30 s leaves a renewal interval and such
// a restart within 2 lease durations.
const rotationLease = 30

// testHubCARotation rotates the serving CA, then the client-signing CA, of a
// hub whose controller and operator run as Pods on its node, under a cluster
// whose agent runs as a Pod on its own, as an administrator does with
// kubectl ocm hub rotate-ca: the new serving CA is published (the hub's
// node components restart trusting both), rotate-ca --check --wait waits
// until the agent trusts it, the API server serves with it, the old one
// leaves the bundle; then the API server accepts a new client CA, the
// controller manager signs with it, rotate-ca --signing-ca-file --wait waits
// until the agent holds a certificate of it, and the old one is refused.
// The cluster is never shown other than Available, and a ManifestWork
// created after both rotations is applied. The largest gap between lease
// renewals is logged.
func testHubCARotation(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1")
	ctx := t.Context()
	const cluster = "cluster1"
	hubC, managed := f.env.Cluster("hub"), f.env.Cluster(cluster)
	oldCA := hubC.CAData()
	oldCAFile := filepath.Join(t.TempDir(), "hub-ca.crt")
	require.NoError(t, os.WriteFile(oldCAFile, oldCA, 0o600))
	// The new serving CA is published before the hub's Pods start, so that
	// their clients trust it when the API server changes to it; the agent
	// joins trusting only the old one (--ca-file) and must learn the new one.
	require.NoError(t, f.env.AddServingCA(ctx, hubC))
	newCA := bytes.TrimPrefix(hubC.CAData(), oldCA)
	token, apiserver := joinArgs(t, f.hubInit(t))
	f.ocm(t, "join", "--hub-token", token, "--hub-apiserver", apiserver, "--ca-file", oldCAFile, "--cluster-name", cluster, "--context", cluster)
	f.ocm(t, "accept", "--clusters", cluster, "--context", "hub", "--wait")
	hub := hubC.Client()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, rotationLease))
	require.NoError(t, hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, patch))
	waitJoinedAvailable(t, hub, cluster)
	mon := faults.WatchFleet(t, hubC, []string{cluster}, time.Second)
	renewed := func(what string) {
		t.Helper()
		since := time.Now()
		framework.Eventually(t.Context(), t, 2*time.Minute, cluster+" renews its lease "+what, func(context.Context) (bool, error) { return mon.RenewedAfter(since) })
	}

	out := f.ocm(t, "hub", "rotate-ca", "--check", "--wait", "--timeout", "3m", "--context", "hub")
	assert.Contains(t, out, "All 1 clusters are ready")
	framework.WaitAgentTrusts(ctx, t, managed, append(append([]byte(nil), oldCA...), newCA...), 2*time.Minute)

	require.NoError(t, f.env.ServeWithNewCA(ctx, hubC))
	renewed("from the hub serving with the new CA")

	require.NoError(t, f.env.RemoveOldServingCA(ctx, hubC))
	framework.Eventually(t.Context(), t, 2*time.Minute, cluster+" trusting only the new CA", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		got, _ := mc.ClaimValue(certs.HubCAsClaim)
		return got == certs.HubCAsClaimValue(newCA), nil
	})
	framework.WaitAgentTrusts(ctx, t, managed, newCA, 2*time.Minute)
	_, err := f.tryOCM(t, "hub", "rotate-ca", "--check", "--ca-file", oldCAFile, "--context", "hub")
	assert.Error(t, err, "rotate-ca --check --ca-file <the old CA>: no cluster trusts it any more")
	renewed("after the old serving CA left")

	require.NoError(t, f.env.AddClientCA(ctx, hubC))
	require.NoError(t, f.env.SignWithNewClientCA(ctx, hubC))
	signer := filepath.Join(t.TempDir(), "signer.crt")
	require.NoError(t, os.WriteFile(signer, hubC.ClientCAData(), 0o600))
	f.ocm(t, "hub", "rotate-ca", "--signing-ca-file", signer, "--wait", "--timeout", "3m", "--context", "hub")
	signers, err := certs.ParseCertificates(hubC.ClientCAData())
	require.NoError(t, err)
	sec := &corev1.Secret{}
	require.NoError(t, managed.Client().Get(ctx, client.ObjectKey{Namespace: config.AgentNamespace, Name: operatorv1.HubKubeConfigSecret}, sec))
	issued, err := certs.ParseCertificates(sec.Data[kubeconfig.TLSCertKey])
	require.NoError(t, err)
	assert.True(t, certs.SignedByAny(issued[0], signers), "the agent's hub credential is a certificate of the new signing CA")
	require.NoError(t, f.env.RemoveOldClientCA(ctx, hubC))
	renewed("after the old client CA was refused")

	// The hub's Pods and the agent's Pod work on: a new work is applied. (A
	// new client: the earlier one's certificate is of the refused CA.)
	w, err := framework.AppWork(cluster, "after-rotation", "after-rotation")
	require.NoError(t, err)
	require.NoError(t, hubC.Client().Create(ctx, w))
	waitDeploymentAvailable(t, managed.Client(), "after-rotation", "app")

	assert.Empty(t, mon.NotAvailable(), "%s seen other than Available during the rotations", cluster)
	gap, of := mon.LargestGap()
	t.Logf("lease renewals seen %v; largest gap %s (%s; lease %d s, Unknown after %d s); %d polls of the hub failed (its API server restarted)",
		mon.Renewals(), gap.Round(time.Millisecond), of, rotationLease, 2*rotationLease, mon.FailedPolls())
}
