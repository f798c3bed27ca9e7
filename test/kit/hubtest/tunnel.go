package hubtest

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub/registrar"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Tunnel is the hub tunnel's aggregated API served in-process.
type Tunnel struct {
	// Server is the hub tunnel's server.
	Server *proxyhub.Server
	// Address is where it listens, 127.0.0.1:port.
	Address string
	// Stop stops it (and is called when the test ends); it may be called
	// more than once.
	Stop func()
}

// StartTunnel runs the hub tunnel's server (the aggregated API
// proxy.kubectl-ocm.io) in-process as the shipped ocm-hub-tunnel
// ServiceAccount, as `ocm-controller tunnel` does, with the serving
// certificate the hub controller's registrar keeps (run as the shipped
// ocm-hub-controller ServiceAccount), and waits until the hub's API server
// serves the API through it. Install must have run. With bind empty it
// picks a free loopback port; a restarted tunnel passes the previous
// Address.
//
// The harness's one departure from a cluster: the hub has no node, so
// nothing routes the tunnel's Service, and the registrar registers no
// APIService for a Service without a ready endpoint. StartTunnel makes
// Service ocm-hub-tunnel an ExternalName Service for 127.0.0.1 and creates
// the APIService pointing at it and the port, whose caBundle the registrar
// keeps, and the API server's aggregator dials the in-process server there,
// verifying its certificate for the Service's name as it would in a cluster.
func StartTunnel(ctx context.Context, t testing.TB, hub *framework.Cluster, bind string) *Tunnel {
	return StartTunnelWithLimits(ctx, t, hub, bind, proxyhub.Limits{})
}

// StartTunnelWithLimits is StartTunnel with the tunnel server's limits; zero
// fields take the tunnel's defaults.
func StartTunnelWithLimits(ctx context.Context, t testing.TB, hub *framework.Cluster, bind string, limits proxyhub.Limits) *Tunnel {
	t.Helper()
	if bind == "" {
		port, err := framework.FreePort()
		if err != nil {
			t.Fatalf("find a port for the hub tunnel: %v", err)
		}
		bind = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	controller, _ := serviceAccountClient(ctx, t, hub, config.HubControllerDeployment)
	c, cfg := serviceAccountClient(ctx, t, hub, config.HubTunnelDeployment)
	log := framework.TestLogger(t, "hub tunnel", 1)
	// The APIService first: the registrar sets its caBundle.
	_, portText, _ := net.SplitHostPort(bind)
	port, _ := strconv.Atoi(portText)
	if err := framework.RouteAPIServiceToLoopback(ctx, hub.Client(), hubtunnel.APIServiceName, config.HubNamespace, hubtunnel.ServiceName, port); err != nil {
		t.Fatal(err)
	}
	reg := &registrar.Registrar{Client: controller, Reader: controller, Namespace: config.HubNamespace, Log: log.WithName("registrar")}
	if _, _, err := reg.Sync(ctx); err != nil {
		t.Fatalf("the hub controller's registrar: %v", err)
	}
	cert := &proxyhub.Certificate{Reader: c, Namespace: config.HubNamespace, Log: log.WithName("certificate")}
	if err := cert.Load(ctx); err != nil {
		t.Fatal(err)
	}
	host, _, _ := net.SplitHostPort(bind)
	srv := webhook.NewServer(webhook.Options{Host: host, Port: port, TLSOpts: []func(*tls.Config){func(tc *tls.Config) {
		tc.GetCertificate = cert.GetCertificate
		tc.ClientAuth = tls.RequestClientCert
	}}})
	clusters, err := cache.New(cfg, cache.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	tunnels := proxyhub.New(proxyhub.Options{Reviews: c, Reader: c, Clusters: clusters, Limits: limits, Log: log.WithName("hub-tunnel")})
	tunnels.Register(srv)
	stop := runUntilStopped(t, map[string]func(context.Context) error{
		"TLS server": srv.Start, "tunnel server": tunnels.Start, "ManagedCluster cache": clusters.Start,
		"registrar": reg.Start, "certificate reader": cert.Start,
	})
	framework.Eventually(ctx, t, time.Minute, "the hub's API server serving "+hubtunnel.GroupVersion+" through the in-process server", func(ctx context.Context) (bool, error) {
		_, err := hub.Clientset().Discovery().ServerResourcesForGroupVersion(hubtunnel.GroupVersion)
		return err == nil, nil
	})
	return &Tunnel{Server: tunnels, Address: bind, Stop: stop}
}

// serviceAccountClient returns a client of hub, and its config, with a token
// of the ServiceAccount name in config.HubNamespace.
func serviceAccountClient(ctx context.Context, t testing.TB, hub *framework.Cluster, name string) (client.Client, *rest.Config) {
	t.Helper()
	cfg, err := hub.ConfigForServiceAccount(ctx, config.HubNamespace, name, time.Hour)
	if err != nil {
		t.Fatalf("credentials of ServiceAccount %s: %v", name, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// runUntilStopped runs each of runs until the returned stop (also a cleanup of t)
// cancels them, and reports the errors they return by their names.
func runUntilStopped(t testing.TB, runs map[string]func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := map[string]chan error{}
	for what, run := range runs {
		ch := make(chan error, 1)
		done[what] = ch
		go func() { ch <- run(ctx) }()
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for what, ch := range done {
			if err := <-ch; err != nil {
				t.Errorf("hub tunnel's %s: %v", what, err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}
