package registration

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/importer"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

var importQueue = flag.Int("imports", 100, "BenchmarkImportQueue: import Secrets written at once")

// BenchmarkImportToAvailable measures, over -joins rounds on one fleet, an
// import of cluster1 from the hub (import Secret created → Available) and,
// beside it, a join (what `kubectl ocm join` installs created → Available).
// Both install the Klusterlet operator, which installs the agent; an
// acceptor plays the hub admin in both. Between rounds cluster1 is unjoined
// and its ManagedCluster deleted.
func BenchmarkImportToAvailable(b *testing.B) {
	const cluster = "cluster1"
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{RunnerArgs: benchkit.ImporterRunnerArgs}, cluster)
	ctx := b.Context()
	f.EnableImporter(ctx, b)
	var imported, importAvail, joinAvail []float64
	for i := range *joinRuns {
		if i > 0 {
			unjoinCluster(ctx, b, f, cluster)
		}
		t := benchkit.ImportCluster(ctx, b, f, cluster)
		b.Logf("import %d/%d: imported %.2f s, Available %.2f s after the import Secret", i+1, *joinRuns, t.Imported.Seconds(), t.Available.Seconds())
		imported, importAvail = append(imported, t.Imported.Seconds()), append(importAvail, t.Available.Seconds())
		unjoinCluster(ctx, b, f, cluster)
		j := benchkit.JoinClusterWithOperator(ctx, b, f, cluster)
		b.Logf("join %d/%d: Available %.2f s after the install", i+1, *joinRuns, j.Seconds())
		joinAvail = append(joinAvail, j.Seconds())
	}
	n := len(importAvail)
	benchkit.Record(b, fmt.Sprintf("import: Secret → ImportSucceed, p50 of %d", n), fmt.Sprintf("%.2f s", benchkit.Quantile(imported, 0.5)), "the importer installs the Klusterlet operator and Klusterlet")
	benchkit.Record(b, fmt.Sprintf("import: Secret → Available, p50 of %d", n), fmt.Sprintf("%.2f s", benchkit.Quantile(importAvail, 0.5)), "")
	benchkit.Record(b, fmt.Sprintf("join: install → Available, p50 of %d", n), fmt.Sprintf("%.2f s", benchkit.Quantile(joinAvail, 0.5)), "the same objects, applied by the joining side")
	benchkit.Record(b, "import: Secret → Available, every import", benchkit.SecondsList(importAvail), "")
	benchkit.Record(b, "join: install → Available, every join", benchkit.SecondsList(joinAvail), "")
	b.ReportMetric(benchkit.Quantile(importAvail, 0.5), "import-p50-s")
	b.ReportMetric(benchkit.Quantile(joinAvail, 0.5), "join-p50-s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkImportQueue writes -imports import Secrets at once, each for a
// cluster of its own whose credential is cluster1's (the importer installs
// the Klusterlet on cluster1 for each, whose Deployments nothing runs), and
// measures the time until every import succeeded and, once simulated agents
// register the clusters, until every cluster is Available; and the peak
// resident memory of the importer and of the hub controller.
func BenchmarkImportQueue(b *testing.B) {
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{
		Values:     config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}},
		RunnerArgs: benchkit.ImporterRunnerArgs,
		Unmanaged:  []string{"cluster1"},
	}, "cluster1")
	ctx := b.Context()
	f.EnableImporter(ctx, b)
	clusters := make([]string, *importQueue)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("imported-%03d", i+1)
		for _, obj := range []client.Object{
			&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusters[i]}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusters[i]}},
		} {
			if err := f.HubClient.Create(ctx, obj); err != nil {
				b.Fatal(err)
			}
		}
	}
	importerProc, _ := f.Runner.Process("hub", config.HubNamespace, benchkit.Importer)
	hub, _ := f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)

	secrets := make([]*corev1.Secret, len(clusters))
	for i, c := range clusters {
		secrets[i] = kit.ImportSecret(b, c, f.Env.Cluster("cluster1").RESTConfig())
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(clusters))
	for i, sec := range secrets {
		wg.Go(func() { errs[i] = f.HubClient.Create(ctx, sec) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	written := time.Since(start)
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 10*time.Minute, fmt.Sprintf("%d imports succeeded", len(clusters)), func(ctx context.Context) (bool, error) {
		return countTrue(ctx, f, imp.ConditionImportSucceeded, len(clusters))
	})
	allImported := time.Since(start)
	benchkit.StartSimAgents(ctx, b, benchkit.NewSimHub(b, f), clusters)
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("%d clusters Available", len(clusters)), func(ctx context.Context) (bool, error) {
		return countTrue(ctx, f, clusterv1.ManagedClusterConditionAvailable, len(clusters))
	})
	allAvailable := time.Since(start)
	im, err := benchkit.ReadProcMemory(importerProc.Pid)
	if err != nil {
		b.Fatal(err)
	}
	hm, err := benchkit.ReadProcMemory(hub.Pid)
	if err != nil {
		b.Fatal(err)
	}
	n := len(clusters)
	benchkit.Record(b, fmt.Sprintf("%d import Secrets written", n), benchkit.Seconds(written), "")
	benchkit.Record(b, fmt.Sprintf("%d import Secrets → all ImportSucceed", n), benchkit.Seconds(allImported), fmt.Sprintf("%d imports at a time", importer.Workers))
	benchkit.Record(b, fmt.Sprintf("%d import Secrets → all Available", n), benchkit.Seconds(allAvailable),
		fmt.Sprintf("simulated agents register once all are imported, %d at once", benchkit.SimConcurrency))
	benchkit.Record(b, "importer peak RSS (VmHWM)", benchkit.MiB(im.HWM), "")
	benchkit.Record(b, "hub controller peak RSS (VmHWM)", benchkit.MiB(hm.HWM), "")
	b.ReportMetric(allImported.Seconds(), "imported-s")
	b.ReportMetric(float64(im.HWM)/(1<<20), "importer-hwm-MiB")
	b.ReportMetric(0, "ns/op")
}

// countTrue reports whether at least n ManagedClusters have condition typ
// True.
func countTrue(ctx context.Context, f *benchkit.Fleet, typ string, n int) (bool, error) {
	mcs := &clusterv1.ManagedClusterList{}
	if err := f.HubClient.List(ctx, mcs); err != nil {
		return false, err
	}
	count := 0
	for _, mc := range mcs.Items {
		if meta.IsStatusConditionTrue(mc.Status.Conditions, typ) {
			count++
		}
	}
	return count >= n, nil
}
