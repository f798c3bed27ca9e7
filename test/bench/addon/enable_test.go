package addon

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// BenchmarkAddonEnable measures `kubectl ocm addon enable` of the example
// add-on on -clusters clusters (2 real, the rest simulated): from the
// command's start to every ManagedClusterAddOn Available True as a hub watch
// delivers it, in all and per cluster.
func BenchmarkAddonEnable(b *testing.B) {
	af := startAddonFleet(b)
	n := len(af.clusters)
	start, cli, t := af.enableAll(b.Context(), b)
	fromStart, fromSeen, last := t.latencies(start)
	total := last.Sub(start)

	how := fmt.Sprintf("%d clusters: %d real agents running helloworld-addon, %d simulated; enabled with kubectl ocm addon enable (in process, one command)",
		n, len(realClusters), n-len(realClusters))
	benchkit.Record(b, fmt.Sprintf("enable on %d clusters → all Available", n), benchkit.Seconds(total), how)
	var lastSeen time.Time
	for _, at := range t.seen {
		lastSeen = later(at, lastSeen)
	}
	benchkit.Record(b, "enable command (checks every cluster, writes every ManagedClusterAddOn)", benchkit.Seconds(cli),
		"2 requests per cluster, one after the other, within kubectl ocm's rate limit (50 per second, bursts of 100)")
	benchkit.Record(b, "last ManagedClusterAddOn created → all Available", benchkit.Seconds(last.Sub(lastSeen)), "")
	benchkit.Record(b, "per cluster: enable start → Available", quantiles(fromStart), "")
	benchkit.Record(b, "per cluster: its ManagedClusterAddOn created → Available", quantiles(fromSeen), "")
	var real []string
	for _, c := range realClusters {
		real = append(real, fmt.Sprintf("%s %.2f s", c, t.met[c].Sub(later(t.seen[c], start)).Seconds()))
	}
	benchkit.Record(b, "real clusters: created → Available", fmt.Sprint(real),
		"agent deployed by the work agent, started by the component runner, Deployment feedback")
	b.ReportMetric(total.Seconds(), "all-available-s")
	b.ReportMetric(benchkit.Quantile(fromSeen, 0.5), "p50-s")
	b.ReportMetric(0, "ns/op")
}
