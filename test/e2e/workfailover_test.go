package e2e

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

// testWorkloadFailover kills the agent of the cluster a Placement of one
// cluster chose, and keeps the new agent off the hub: the hub marks the
// cluster Unknown and taints it unreachable, the Placement, which tolerates
// the taint for 15 seconds, moves to the other cluster, and both
// ManifestWorkReplicaSets of it follow. When the path comes back, the
// default set's old copy is removed and the Orphan set's stays. The hub never
// decides two clusters, and once the replacement is Available no sample sees
// zero copies. The figures are logged as "failover key=value ...".
func testWorkloadFailover(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1", "cluster2")
	proxies := map[string]*framework.Proxy{}
	next := []string{"cluster1", "cluster2"}
	f.joinAllVia(t, func(hub string) string {
		u, err := url.Parse(hub)
		require.NoError(t, err)
		p := framework.StartProxyForTest(t, u.Host)
		proxies[next[0]], next = p, next[1:]
		return "https://" + p.Addr()
	}, "cluster1", "cluster2")

	ctx := t.Context()
	fo := &faults.Failover{
		Hub:      f.env.Cluster("hub"),
		Clusters: map[string]*framework.Cluster{"cluster1": f.env.Cluster("cluster1"), "cluster2": f.env.Cluster("cluster2")},
		Cut: func(cluster string) error {
			return faults.CutAgent(ctx, f.env.Cluster(cluster), proxies[cluster])
		},
		Restore: func(cluster string) error {
			proxies[cluster].Unblock()
			return nil
		},
		Namespace: "failover", App: "failover-app", Kept: "failover-kept",
		LeaseSeconds: 10, TolerationSeconds: 15, PollEvery: 250 * time.Millisecond,
	}
	r := fo.Run(ctx, t)
	t.Logf("failover lease=%ds toleration=%ds %s", fo.LeaseSeconds, fo.TolerationSeconds, r)
	f.ocm(t, "placement", "decisions", "failover", "-n", "failover", "--context", "hub")

	assert.Equal(t, 1, r.MaxDecided, "the Placement of one cluster decided more at once")
	assert.Zero(t, r.ZeroWindow, "no copy of the application Available after the replacement was")
	assert.True(t, r.KeptStays, "the Orphan set's copy on %s was removed", r.Lost)
	// The taint waits for Unknown, and the move for the toleration.
	assert.GreaterOrEqual(t, r.Moved-r.Tainted, time.Duration(fo.TolerationSeconds)*time.Second-time.Second,
		"the Placement moved before the toleration ran out")
	assert.Greater(t, r.Samples, 10, "too few samples to count the copies")
}
