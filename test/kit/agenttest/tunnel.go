package agenttest

import (
	"context"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// StartTunnelAgent joins the managed cluster named cluster of env to env's
// cluster "hub" (Join, as agent agent1) and runs the agent's end of the hub
// tunnel in-process, as the klusterlet-agent ServiceAccount, until the
// returned stop is called or t ends. The hub end must run
// (hubtest.StartTunnel) for the tunnel to attach. stop waits for the agent
// to finish and may be called more than once; StartTunnelAgent may be
// called again for the same cluster after a stop.
func StartTunnelAgent(ctx context.Context, t *testing.T, env *framework.Environment, cluster string) (stop func()) {
	t.Helper()
	hubCluster, spoke := env.Cluster("hub"), env.Cluster(cluster)
	Join(ctx, t, hubCluster, spoke, config.AgentValues{ClusterName: cluster}, "agent1")
	return Run(t, spoke, 1, func(mgr ctrl.Manager) error {
		tunnel, err := proxyagent.New(proxyagent.Options{
			Config: mgr.GetConfig(), Managed: mgr.GetConfig(),
			Namespace: config.AgentNamespace, HubKubeconfigSecret: operatorv1.HubKubeConfigSecret,
		}, mgr.GetLogger().WithName("hub-tunnel"))
		if err != nil {
			return err
		}
		return mgr.Add(tunnel)
	})
}
