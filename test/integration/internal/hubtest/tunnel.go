package hubtest

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Tunnel is the hub tunnel's aggregated API served in-process.
type Tunnel struct {
	// Server is the hub controller's tunnel server.
	Server *proxyhub.Server
	// Address is where it listens, 127.0.0.1:port.
	Address string
	// Stop stops it (and is called when the test ends); it may be called
	// more than once.
	Stop func()
}

// StartTunnel runs the hub tunnel's server (the aggregated API
// proxy.kubectl-ocm.io) in-process as the shipped ocm-hub-controller
// ServiceAccount, on the conversion webhook's server and certificate as the
// hub controller does, and waits until the hub's API server serves the API
// through it. Install must have run. With bind empty it picks a free
// loopback port; a restarted tunnel passes the previous Address.
//
// The harness's one departure from a cluster: the hub has no node, so
// nothing routes the hub controller's Service, and `hub init` with a
// conversion webhook URL (as Install runs it) installs no APIService.
// StartTunnel creates Service ocm-hub-controller-tunnel as an ExternalName
// Service for 127.0.0.1 and the APIService pointing at it and the port, and
// the API server's aggregator dials the in-process server there, verifying
// its certificate for the Service's name as it would in a cluster.
func StartTunnel(ctx context.Context, t testing.TB, hub *framework.Cluster, bind string) *Tunnel {
	return StartTunnelWithLimits(ctx, t, hub, bind, proxyhub.Limits{})
}

// StartTunnelWithLimits is StartTunnel with the tunnel server's limits; zero
// fields take the hub controller's defaults.
func StartTunnelWithLimits(ctx context.Context, t testing.TB, hub *framework.Cluster, bind string, limits proxyhub.Limits) *Tunnel {
	t.Helper()
	if bind == "" {
		port, err := framework.FreePort()
		if err != nil {
			t.Fatalf("find a port for the hub tunnel: %v", err)
		}
		bind = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	cfg, err := hub.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		t.Fatalf("hub controller credentials: %v", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	log := framework.TestLogger(t, "hub tunnel", 1)
	w, err := addonconversion.New(c, c, addonconversion.Options{
		Namespace: config.HubNamespace, BindAddress: bind, Resync: time.Minute,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.ClientAuth = tls.RequestClientCert }},
	}, log.WithName("webhook"))
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := cache.New(cfg, cache.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	srv := proxyhub.New(proxyhub.Options{Reviews: c, Reader: c, Clusters: clusters, Limits: limits, Log: log.WithName("hub-tunnel")})
	srv.Register(w.Server)
	// The APIService first: the keeper sets its caBundle when it starts.
	_, portText, _ := net.SplitHostPort(bind)
	port, _ := strconv.Atoi(portText)
	if err := framework.RouteAPIServiceToLoopback(ctx, hub.Client(), hubtunnel.APIServiceName, config.HubNamespace, hubtunnel.ServiceName, port); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(runCtx) }()
	cacheDone := make(chan error, 1)
	go func() { cacheDone <- clusters.Start(runCtx) }()
	serverDone := make(chan error, 1)
	go func() { serverDone <- srv.Start(runCtx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for what, ch := range map[string]chan error{"webhook server": done, "tunnel server": serverDone, "ManagedCluster cache": cacheDone} {
			if err := <-ch; err != nil {
				t.Errorf("hub tunnel's %s: %v", what, err)
			}
		}
	}
	t.Cleanup(stop)
	framework.Eventually(ctx, t, time.Minute, "the hub's API server serving "+hubtunnel.GroupVersion+" through the in-process server", func(ctx context.Context) (bool, error) {
		_, err := hub.Clientset().Discovery().ServerResourcesForGroupVersion(hubtunnel.GroupVersion)
		return err == nil, nil
	})
	return &Tunnel{Server: srv, Address: bind, Stop: stop}
}
