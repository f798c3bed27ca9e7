package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testAcceptWaitsForAutoApproval starts `kubectl ocm accept --wait` for
// cluster5 before its first join, which the hub approves and accepts by
// itself (its requester is in the ClusterManager's autoApproveUsers): accept
// leaves the request to the hub if it sees it pending (on a busy machine it
// had raced the hub to approve it), sees the cluster accepted by the hub,
// says so, and returns as soon as the cluster joined, well before its
// timeout, without blaming the agent.
func testAcceptWaitsForAutoApproval(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client, kubeconfig string) {
	const name = "cluster5"
	bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, "open-cluster-management", "agent-registration-bootstrap", time.Hour)
	boot := clientFor(t, bootCfg, err)
	setAutoApprove(ctx, t, admin, []string{bootstrapSA})
	defer setAutoApprove(ctx, t, admin, nil)
	defer deleteClusterAndWait(ctx, t, admin, name)

	errOut := &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &clitest.SyncBuffer{}, ErrOut: errOut}
		done <- clitest.CLI{Kubeconfig: kubeconfig}.RunWith(ctx, streams, "accept", "--clusters", name, "--wait", "--timeout", "3m")
	}()
	framework.Eventually(ctx, t, pollTimeout, "accept waiting for a request of "+name, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "Waiting for a certificate request of managed cluster "+name), nil
	})

	// The agent's first join: its ManagedCluster and its request, which the
	// hub approves and accepts by itself.
	createCluster(ctx, t, admin, name, false, 0)
	waitApproved(ctx, t, admin, createCSR(ctx, t, boot, name, name))
	waitCluster(ctx, t, admin, name, "accepted by the hub", func(mc *clusterv1.ManagedCluster) bool { return mc.Spec.HubAcceptsClient })
	// The agent joins, as its registration reports (the hub may be writing
	// the cluster's status at the same time).
	reportJoined(ctx, t, admin, name)

	var r clitest.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("accept --wait did not return: %v\n%s", ctx.Err(), errOut.String())
	}
	if r.Err != nil {
		t.Fatalf("accept --wait failed on a cluster the hub accepted: %v\nstderr:\n%s", r.Err, r.ErrOut)
	}
	for _, want := range []string{"was accepted by the hub's auto-approval of its identity while this command waited"} {
		if !strings.Contains(r.ErrOut, want) {
			t.Errorf("accept's stderr lacks %q:\n%s", want, r.ErrOut)
		}
	}
	if !strings.Contains(r.Out, "Your managed cluster "+name+" has joined the Hub successfully.") {
		t.Errorf("accept did not say the cluster joined:\n%s", r.Out)
	}
	if strings.Contains(r.ErrOut, "out of the hub's sight") {
		t.Errorf("accept blamed the agent:\n%s", r.ErrOut)
	}
}
