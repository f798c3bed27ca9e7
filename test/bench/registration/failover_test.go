package registration

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
)

var (
	failoverClusters = flag.Int("failover-clusters", 3, "BenchmarkHubFailover: clusters joined with a standby hub")
	failoverTimeout  = flag.Duration("hub-connection-timeout", operatorv1.MinHubConnectionTimeoutSeconds*time.Second, "BenchmarkHubFailover: the agents' hub connection timeout (the Klusterlet's minimum by default)")
)

// failoverApp is the namespace of the workload both hubs deliver.
const failoverApp = "failover-app"

// BenchmarkHubFailover joins -failover-clusters clusters to a hub with a
// standby hub (which approves their bootstrap identity by itself), a lease
// of -lease-seconds and a hub connection timeout of -hub-connection-timeout,
// delivers the same ManifestWork (a namespace, a ConfigMap and a
// Deployment) to each cluster from both hubs, then kills the primary hub's
// API server. It prints the time from the kill to every cluster Available
// on the standby and to every work applied there, the part of it beyond the
// timeout, and the applied objects deleted or recreated meanwhile (none is
// the promise).
func BenchmarkHubFailover(b *testing.B) {
	var clusters []string
	for i := range *failoverClusters {
		clusters = append(clusters, fmt.Sprintf("cluster%d", i+1))
	}
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{Standby: true}, clusters...)
	ctx := b.Context()
	for _, c := range clusters {
		benchkit.JoinCluster(ctx, b, f, c, f.StandbyHub(ctx, b, *failoverTimeout))
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, *leaseSeconds))
		if err := f.Hub.Client().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}, patch); err != nil {
			b.Fatal(err)
		}
		for _, hub := range []*framework.Cluster{f.Hub, f.Standby} {
			createFailoverWork(ctx, b, hub.Client(), c)
		}
	}
	timeout := *failoverTimeout + 3*time.Minute
	worksApplied := func(hub *framework.Cluster, what string) time.Time {
		return benchkit.Poll(ctx, b, benchkit.FastPoll, timeout, what, func(ctx context.Context) (bool, error) {
			for _, c := range clusters {
				w := &workv1.ManifestWork{}
				if err := hub.Client().Get(ctx, client.ObjectKey{Namespace: c, Name: "app"}, w); err != nil {
					return false, err
				}
				if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) || !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable) {
					return false, nil
				}
			}
			return true, nil
		})
	}
	worksApplied(f.Hub, "every work applied from the primary hub")
	var watches []*faults.ObjectWatch
	for _, c := range clusters {
		watches = append(watches, faults.WatchObjects(b, f.Env.Cluster(c), failoverApp,
			corev1.SchemeGroupVersion.WithResource("configmaps"), appsv1.SchemeGroupVersion.WithResource("deployments")))
	}

	killed := time.Now()
	if err := f.Hub.StopAPIServer(); err != nil {
		b.Fatal(err)
	}
	available := benchkit.Poll(ctx, b, benchkit.FastPoll, timeout, "every cluster Available on the standby hub", func(ctx context.Context) (bool, error) {
		for _, c := range clusters {
			mc := &clusterv1.ManagedCluster{}
			if err := f.Standby.Client().Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
				return false, nil
			}
		}
		return true, nil
	})
	applied := worksApplied(f.Standby, "every work applied from the standby hub")
	setting := fmt.Sprintf("%d clusters, lease %d s, hub connection timeout %s", len(clusters), *leaseSeconds, *failoverTimeout)
	benchkit.Record(b, "failover: primary hub killed → every cluster Available on the standby", benchkit.Seconds(available.Sub(killed)), setting)
	benchkit.Record(b, "failover: beyond the hub connection timeout", benchkit.Seconds(available.Sub(killed)-*failoverTimeout),
		"the timeout counts from the last lease renewal, up to one lease period before the kill")
	benchkit.Record(b, "failover: primary hub killed → every work applied from the standby", benchkit.Seconds(applied.Sub(killed)), setting)
	deleted, recreated := 0, 0
	for _, w := range watches {
		deleted += len(w.Deleted())
		recreated += len(w.Recreated())
	}
	benchkit.Record(b, "failover: applied objects deleted / recreated", fmt.Sprintf("%d / %d", deleted, recreated),
		fmt.Sprintf("the ConfigMap and Deployment of each of %d clusters, watched from before the kill", len(clusters)))
	if deleted > 0 || recreated > 0 {
		b.Errorf("the failover deleted %d and recreated %d applied objects; want none", deleted, recreated)
	}
}

// createFailoverWork creates, on a hub, the ManifestWork app of cluster: a
// namespace, a ConfigMap and a Deployment.
func createFailoverWork(ctx context.Context, b *testing.B, hub client.Client, cluster string) {
	b.Helper()
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); client.IgnoreAlreadyExists(err) != nil {
		b.Fatal(err)
	}
	w, err := framework.AppWork(cluster, "app", failoverApp)
	if err != nil {
		b.Fatal(err)
	}
	if err := hub.Create(ctx, w); err != nil {
		b.Fatal(err)
	}
}
