package nodes

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

var (
	failoverLease      = flag.Int("failover-lease-seconds", 10, "BenchmarkWorkloadFailover: spec.leaseDurationSeconds of both clusters")
	failoverToleration = flag.Int64("failover-toleration-seconds", 15, "BenchmarkWorkloadFailover: the Placement's tolerationSeconds of the unreachable taint")
)

// References of the failover figures.
const (
	karmadaRef = "Karmada: evicts once the policy tolerates the cluster's NoExecute taint no longer, 300 s unless configured"
	ocmRef     = "OCM: Unknown after 5 lease durations (300 s at its 60 s default), then the placement's toleration"
)

// BenchmarkWorkloadFailover runs faults.Failover on a hub and two
// clusters with nodes, each agent joined by kubectl-ocm through a proxy that
// can cut it off: the decided cluster's agent is killed and kept off the
// hub, and the application moves to the other cluster. Printed: the time
// from the agent's death to the cluster Unknown, tainted, the Placement
// moved, the new work created and the Deployment Available on the
// replacement; after the path comes back, the time to the old copy's
// removal and how long both copies ran; the most clusters decided at once
// and the longest window of zero copies after the replacement.
func BenchmarkWorkloadFailover(b *testing.B) {
	kubectlOCM, layouts := buildPlugin(b)
	for range b.N {
		env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub", "cluster1", "cluster2"}, Nodes: true, Images: layouts})
		ctx := b.Context()
		ocm := plugin(ctx, b, kubectlOCM, env)
		ocm("hub", "init", "--context", "hub", "--wait")
		token, hubURL, pin := joinCommand(b, ocm)
		u, err := url.Parse(hubURL)
		if err != nil {
			b.Fatal(err)
		}
		proxies := map[string]*framework.Proxy{}
		for _, c := range []string{"cluster1", "cluster2"} {
			proxies[c] = framework.StartProxyForTest(b, u.Host)
			ocm("join", "--hub-token", token, "--hub-apiserver", "https://"+proxies[c].Addr(), "--ca-cert-hash", pin, "--cluster-name", c, "--context", c)
		}
		ocm("accept", "--clusters", "cluster1,cluster2", "--context", "hub", "--wait")
		for _, c := range []string{"cluster1", "cluster2"} {
			benchkit.Poll(ctx, b, benchkit.FastPoll, 3*time.Minute, c+" Available", func(ctx context.Context) (bool, error) {
				mc := &clusterv1.ManagedCluster{}
				if err := env.Cluster("hub").Client().Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
			})
		}
		fo := &faults.Failover{
			Hub:      env.Cluster("hub"),
			Clusters: map[string]*framework.Cluster{"cluster1": env.Cluster("cluster1"), "cluster2": env.Cluster("cluster2")},
			Cut: func(cluster string) error {
				return faults.CutAgent(ctx, env.Cluster(cluster), proxies[cluster])
			},
			Restore: func(cluster string) error {
				proxies[cluster].Unblock()
				return nil
			},
			Namespace: "failover", App: "failover-app", Kept: "failover-kept",
			LeaseSeconds: int32(*failoverLease), TolerationSeconds: *failoverToleration, PollEvery: 250 * time.Millisecond,
		}
		r := fo.Run(ctx, b)
		cfg := fmt.Sprintf("lease %d s, toleration %d s", *failoverLease, *failoverToleration)
		benchkit.Record(b, "agent killed → cluster Unknown on the hub", benchkit.Seconds(r.Unknown), cfg+"; "+ocmRef)
		benchkit.Record(b, "agent killed → tainted unreachable", benchkit.Seconds(r.Tainted), "")
		benchkit.Record(b, "agent killed → Placement moved", benchkit.Seconds(r.Moved), karmadaRef)
		benchkit.Record(b, "agent killed → work on the replacement", benchkit.Seconds(r.Created), "")
		benchkit.Record(b, "agent killed → Deployment Available on the replacement", benchkit.Seconds(r.Available), "the failover time")
		benchkit.Record(b, "path back → old copy removed", benchkit.Seconds(r.Removed), "the Orphan set's copy stays: "+fmt.Sprint(r.KeptStays))
		benchkit.Record(b, "both copies Available after the path came back", benchkit.Seconds(r.Overlap), "")
		benchkit.Record(b, "most clusters decided at once", fmt.Sprint(r.MaxDecided), "the Placement's numberOfClusters: 1")
		benchkit.Record(b, "longest window of zero copies after the replacement", benchkit.Seconds(r.ZeroWindow), fmt.Sprintf("%d samples, every 250 ms", r.Samples))
		b.ReportMetric(r.Available.Seconds(), "failover-s")
	}
}
