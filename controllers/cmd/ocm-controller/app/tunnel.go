package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// TunnelOptions are the flags of `ocm-controller tunnel`.
type TunnelOptions struct {
	ManagerOptions
	// BindAddress is where the aggregated API is served, host:port.
	BindAddress string
	// Tunnel bounds the tunnels and their proxied connections.
	Tunnel proxyhub.Limits
	// ProxyBufferBudget is the --proxy-buffer-budget value; Validate
	// parses it into Tunnel.BufferBudget.
	ProxyBufferBudget string
	// TLS is the TLS profile of the tunnel's server.
	TLS TLSOptions
}

// NewTunnelCommand returns `ocm-controller tunnel`, the hub tunnel: the
// aggregated API proxy.kubectl-ocm.io where agents attach their tunnels and
// hub users' requests are sent through them. It runs apart from the hub
// controller, as a ServiceAccount that may only authorize and proxy, since
// it is the hub's process that reads what agents send all day.
func NewTunnelCommand() *cobra.Command {
	o := &TunnelOptions{}
	cmd := &cobra.Command{
		Use:   "tunnel",
		Short: "Run the hub tunnel: the API where agents attach their tunnels and hub users reach managed clusters through them",
		Args:  cobra.NoArgs,
		RunE:  runMode(o),
	}
	// Every replica serves; none needs to be elected (an agent's tunnel
	// ends at the replica it reached, so the shipped Deployment runs one).
	o.AddFlags(cmd.Flags(), false)
	cmd.Flags().StringVar(&o.BindAddress, "tunnel-bind-address", ":"+strconv.Itoa(hubtunnel.Port), "Address the aggregated API "+hubtunnel.GroupVersion+" binds to.")
	tunnel := proxyhub.DefaultLimits()
	cmd.Flags().IntVar(&o.Tunnel.ConnectionsPerCluster, "proxy-max-connections-per-cluster", tunnel.ConnectionsPerCluster, "Proxied connections (requests, watches, logs, execs through managedclusters/proxy) open to one cluster at once; more get 429 Too Many Requests.")
	cmd.Flags().IntVar(&o.Tunnel.ConnectionsPerUser, "proxy-max-connections-per-user", tunnel.ConnectionsPerUser, "Proxied connections one hub user holds open at once, to every cluster together; more get 429 Too Many Requests.")
	cmd.Flags().StringVar(&o.ProxyBufferBudget, "proxy-buffer-budget", "", fmt.Sprintf("Memory (a quantity such as 64Mi) the proxied connections' buffers may hold at once, summed over every tunnel: what agents sent that the clients have not read yet. Past it the connection holding the most is closed. By default 1/%d of the smaller of the container's memory limit and GOMEMLIMIT, 1/%d of %s without either; at least %s.", proxyhub.BufferBudgetShare, proxyhub.BufferBudgetShare, resource.NewQuantity(proxyhub.DefaultMemoryLimit, resource.BinarySI), resource.NewQuantity(proxyhub.MinBufferBudget, resource.BinarySI)))
	cmd.Flags().DurationVar(&o.Tunnel.WriteTimeout, "proxy-write-timeout", tunnel.WriteTimeout, "How long a proxied request's client (a watch, log or exec included) may take nothing of the answer before the tunnel closes its connection; a quiet stream with nothing to send is not affected.")
	cmd.Flags().DurationVar(&o.Tunnel.Lifetime, "tunnel-max-lifetime", tunnel.Lifetime, "How long an agent's tunnel stays attached before the hub closes it and the agent attaches again with the credential it holds then (each tunnel up to a tenth longer).")
	o.TLS.AddFlags(cmd.Flags(), "the hub tunnel's server (--tunnel-bind-address)", "whose changes reach new connections without a restart")
	return cmd
}

// Validate checks the flags.
func (o *TunnelOptions) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if o.LeaderElect {
		return errors.New("--leader-elect: the tunnel elects no leader; every replica serves the tunnels that reach it")
	}
	if _, _, err := splitBindAddress(o.BindAddress); err != nil {
		return err
	}
	if o.ProxyBufferBudget != "" {
		q, err := resource.ParseQuantity(o.ProxyBufferBudget)
		if err != nil {
			return fmt.Errorf("--proxy-buffer-budget %q: %w (a quantity such as 64Mi)", o.ProxyBufferBudget, err)
		}
		o.Tunnel.BufferBudget = q.Value()
	}
	if err := o.Tunnel.Validate(); err != nil {
		return err
	}
	if err := o.TLS.Validate(); err != nil {
		return err
	}
	if o.Namespace == "" {
		return errors.New("the tunnel reads its serving certificate from Secret " + hubtunnel.SecretName + " of its namespace: set $" + PodNamespaceEnv + " or --namespace")
	}
	return nil
}

// splitBindAddress returns the host and port of a --tunnel-bind-address.
func splitBindAddress(addr string) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("--tunnel-bind-address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("--tunnel-bind-address %q: the port must be a number from 1 to 65535", addr)
	}
	return host, port, nil
}

// Run serves the hub tunnel until ctx ends.
func (o *TunnelOptions) Run(ctx context.Context) error {
	cfg, err := o.Connect(ctx)
	if err != nil {
		return err
	}
	host, port, err := splitBindAddress(o.BindAddress)
	if err != nil {
		return err
	}
	// The TLS profile applies to each new connection, so a change of the
	// ConfigMap takes effect without a restart, which would drop every
	// agent's tunnel.
	profile, profileWatcher, err := o.TLS.Load(ctx, cfg, o.Namespace, servesECDSA("the hub tunnel"), ctrl.Log.WithName("tls-profile"))
	if err != nil {
		return err
	}
	cert := &proxyhub.Certificate{Namespace: o.Namespace, Log: ctrl.Log.WithName("serving-certificate")}
	server := webhook.NewServer(webhook.Options{
		Host: host, Port: port,
		TLSOpts: []func(*tls.Config){
			func(c *tls.Config) {
				c.GetCertificate = cert.GetCertificate
				// The hub's API server presents its front-proxy client
				// certificate.
				c.ClientAuth = tls.RequestClientCert
			},
			profile.ServerOption(),
		},
	})
	mgr, err := o.NewManager(cfg, "", func(mo *manager.Options) {
		// The tunnel reads and watches ManagedClusters only.
		mo.Cache = cache.Options{ByObject: map[client.Object]cache.ByObject{&clusterv1.ManagedCluster{}: {}}}
		mo.WebhookServer = server
	})
	if err != nil {
		return err
	}
	cert.Reader = mgr.GetAPIReader()
	if err := mgr.Add(cert); err != nil {
		return fmt.Errorf("add the serving certificate's reader: %w", err)
	}
	if err := mgr.AddReadyzCheck("serving-certificate", cert.Loaded); err != nil {
		return fmt.Errorf("add the serving certificate's readiness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("tunnel-server", server.StartedChecker()); err != nil {
		return fmt.Errorf("add the tunnel server's readiness check: %w", err)
	}
	if profileWatcher != nil {
		if err := mgr.Add(profileWatcher); err != nil {
			return fmt.Errorf("add the TLS profile's watcher: %w", err)
		}
	}
	reviews, err := proxyhub.ReviewClient(cfg)
	if err != nil {
		return err
	}
	tunnels := proxyhub.New(proxyhub.Options{
		Reviews: reviews, Reader: mgr.GetAPIReader(), Clusters: mgr.GetCache(),
		Limits: o.Tunnel, Log: ctrl.Log.WithName("hub-tunnel"),
	})
	// The manager starts its webhook server only once it is asked for it.
	tunnels.Register(mgr.GetWebhookServer())
	if err := mgr.Add(tunnels); err != nil {
		return fmt.Errorf("add the hub tunnel server: %w", err)
	}
	if err := tunnels.RegisterMetrics(); err != nil {
		return err
	}
	ctrl.Log.WithName("tunnel").Info("Starting the hub tunnel", "namespace", o.Namespace, "address", o.BindAddress)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the hub tunnel: %w", err)
	}
	return nil
}
