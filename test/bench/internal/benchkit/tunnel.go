package benchkit

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// ServeTunnel makes the hub's API server reach the hub tunnel that the
// component runner runs (ocm-controller tunnel, its shipped Deployment) and
// waits until it serves the tunnel's aggregated API through it; it returns
// the tunnel's process. The hub has no node, so the tunnel's Service
// becomes an ExternalName Service for 127.0.0.1 at the port of the
// tunnel's --tunnel-bind-address (framework.RouteAPIServiceToLoopback): the
// aggregator still verifies the tunnel's certificate for the Service's
// name.
func (f *Fleet) ServeTunnel(ctx context.Context, b testing.TB) runner.ProcessInfo {
	b.Helper()
	f.WaitReady(ctx, b, "hub", config.HubNamespace, config.HubTunnelDeployment)
	info, ok := f.Runner.Process("hub", config.HubNamespace, config.HubTunnelDeployment)
	if !ok {
		b.Fatal("the component runner runs no hub tunnel")
	}
	port, err := TunnelPort(info.Args)
	if err != nil {
		b.Fatal(err)
	}
	if err := framework.RouteAPIServiceToLoopback(ctx, f.HubClient, hubtunnel.APIServiceName, config.HubNamespace, hubtunnel.ServiceName, port); err != nil {
		b.Fatal(err)
	}
	Poll(ctx, b, FastPoll, 3*time.Minute, "the hub serving "+hubtunnel.GroupVersion, func(ctx context.Context) (bool, error) {
		_, err := f.Hub.Clientset().Discovery().ServerResourcesForGroupVersion(hubtunnel.GroupVersion)
		return err == nil, nil
	})
	return info
}

// TunnelPort returns the port of the hub tunnel's --tunnel-bind-address in
// its arguments args.
func TunnelPort(args []string) (int, error) {
	addr := FlagValue(args, "--tunnel-bind-address")
	if _, p, err := net.SplitHostPort(addr); err == nil {
		if port, err := strconv.Atoi(p); err == nil {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no --tunnel-bind-address with a port in %v", args)
}
