package benchkit

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
)

// JoinClusterWithOperator installs on cluster what `kubectl ocm join`
// writes (the Klusterlet operator, the bootstrap Secret and the Klusterlet),
// with an acceptor playing the hub admin, and waits until the operator has
// installed the agent and the ManagedCluster is Available. It returns the
// time from the install to Available.
func JoinClusterWithOperator(ctx context.Context, b *testing.B, f *Fleet, cluster string) time.Duration {
	b.Helper()
	info, err := hubcli.NewJoinInfo(ctx, f.HubClient, f.Hub.RESTConfig(), time.Hour, "")
	if err != nil {
		b.Fatal(err)
	}
	boot, err := kubeconfig.ForToken(info.HubAPIServer, f.JoinCA, info.HubToken)
	if err != nil {
		b.Fatal(err)
	}
	objs, _, err := config.KlusterletInstallObjects(config.KlusterletOperatorValues{},
		config.AgentValues{ClusterName: cluster, HubAPIServer: info.HubAPIServer, BootstrapKubeconfig: boot}, false)
	if err != nil {
		b.Fatal(err)
	}
	acceptance := startAcceptor(ctx, b, f, cluster)
	start := time.Now()
	if err := apply.Apply(ctx, f.Env.Cluster(cluster).Client(), objs, apply.Options{}); err != nil {
		b.Fatalf("install the Klusterlet operator and the Klusterlet on %s: %v", cluster, err)
	}
	if r := <-acceptance; r.err != nil {
		b.Fatalf("accept %s: %v", cluster, r.err)
	}
	var available time.Duration
	Poll(ctx, b, FastPoll, joinTimeout, "ManagedCluster "+cluster+" Available and its Klusterlet Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if available == 0 && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			available = time.Since(start)
		}
		k := &operatorv1.Klusterlet{}
		if err := f.Env.Cluster(cluster).Client().Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil {
			return false, err
		}
		return available != 0 && meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1.ConditionKlusterletAvailable), nil
	})
	return available
}
