package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=users;groups,verbs=impersonate

// Back-off between two attempts to attach the tunnel: from MinBackoff,
// doubling to MaxBackoff; a tunnel that stayed up for StableAfter starts
// over from MinBackoff.
const (
	MinBackoff  = time.Second
	MaxBackoff  = 30 * time.Second
	StableAfter = time.Minute
)

// Options configure the agent's end of the tunnel.
type Options struct {
	// Config reaches the cluster that holds the hub credential Secret (the
	// cluster the agent runs on).
	Config *rest.Config
	// Managed reaches the managed cluster's API server as the agent; the
	// forwarder sends requests with it.
	Managed *rest.Config
	// Namespace and HubKubeconfigSecret name the hub credential Secret.
	Namespace, HubKubeconfigSecret string
	// ClusterName, when not empty, overrides the Secret's cluster-name.
	ClusterName string
	// TLS is the TLS profile of the tunnel's connection to the hub's API
	// server (its minimum version and cipher suites); the zero Profile is
	// TLS 1.2 and up with Go's suites.
	TLS tlsprofile.Profile
}

// Agent keeps the tunnel attached. It runs in the elected replica only.
type Agent struct {
	opts    Options
	forward *forwarder
	log     logr.Logger

	listener *memListener
	server   *http.Server
}

// New returns the agent's end of the tunnel.
func New(opts Options, log logr.Logger) (*Agent, error) {
	fwd, err := newForwarder(opts.Managed)
	if err != nil {
		return nil, err
	}
	l := newMemListener()
	return &Agent{
		opts: opts, forward: fwd, log: log, listener: l,
		server: &http.Server{Handler: fwd, ReadHeaderTimeout: 30 * time.Second},
	}, nil
}

// NeedLeaderElection: one replica attaches the cluster's tunnel.
func (a *Agent) NeedLeaderElection() bool { return true }

// Start serves the forwarder and keeps the tunnel attached with the current
// hub credential until ctx ends.
func (a *Agent) Start(ctx context.Context) error {
	go func() { _ = a.server.Serve(a.listener) }()
	defer func() {
		_ = a.server.Close()
	}()
	ctx = ctrl.LoggerInto(ctx, a.log)
	return hubsession.Run(ctx, hubsession.Options{
		Config: a.opts.Config, Namespace: a.opts.Namespace, Secret: a.opts.HubKubeconfigSecret,
		ClusterName: a.opts.ClusterName,
	}, a.session)
}

// newDialer returns the WebSocket dialer of a tunnel to the hub of cfg (a
// hub credential's configuration): its CA, client certificate and proxy,
// with the TLS profile p applied.
func newDialer(cfg *rest.Config, p tlsprofile.Profile) (*websocket.Dialer, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("TLS configuration of the hub credential: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	p.Apply(tlsConfig)
	proxy := cfg.Proxy
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	return &websocket.Dialer{TLSClientConfig: tlsConfig, Proxy: proxy, HandshakeTimeout: 10 * time.Second}, nil
}

// session keeps the tunnel attached with cred until ctx ends.
func (a *Agent) session(ctx context.Context, cred *hubsession.Credential) error {
	wsURL, err := AttachURL(cred.Config.Host, cred.ClusterName)
	if err != nil {
		return err
	}
	dialer, err := newDialer(cred.Config, a.opts.TLS)
	if err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("url", wsURL)
	backoff := MinBackoff
	for {
		headers := http.Header{}
		if token := cred.BearerToken(); token != "" {
			headers.Set("Authorization", "Bearer "+token)
		}
		started := time.Now()
		connected := false
		err := remotedialer.ConnectToProxyWithDialer(ctx, wsURL, headers, allowDial, dialer, a.dial,
			func(context.Context, *remotedialer.Session) error {
				connected = true
				log.Info("Tunnel to the hub attached")
				return nil
			})
		if ctx.Err() != nil {
			return nil
		}
		if connected && time.Since(started) >= StableAfter {
			backoff = MinBackoff
		}
		wait := wait.Jitter(backoff, 0.1)
		log.Info("Tunnel to the hub is down; attaching again", "in", wait.Round(time.Millisecond).String(), "reason", errorText(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(2*backoff, MaxBackoff)
	}
}

// AttachURL returns the WebSocket URL at which cluster's agent attaches its
// tunnel to the hub whose API server is hubServer.
func AttachURL(hubServer, cluster string) (string, error) {
	u, err := url.Parse(hubServer)
	if err != nil {
		return "", fmt.Errorf("hub server %q: %w", hubServer, err)
	}
	// The agent's credential travels with the attach request: never over
	// plain HTTP.
	if u.Scheme != "https" {
		return "", fmt.Errorf("hub server %q: the scheme must be https, the tunnel sends the agent's credential", hubServer)
	}
	u.Scheme = "wss"
	u.Path = strings.TrimSuffix(u.Path, "/") + hubtunnel.AttachPath(cluster)
	return u.String(), nil
}

// allowDial lets the hub dial only the forwarder.
func allowDial(proto, address string) bool {
	return proto == "tcp" && address == hubtunnel.AgentAddress
}

// dial hands the hub's connection to the forwarder in memory.
func (a *Agent) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if !allowDial(network, address) {
		return nil, fmt.Errorf("the tunnel reaches only %s, not %s", hubtunnel.AgentAddress, address)
	}
	return a.listener.dial(ctx)
}

func errorText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// memListener is a net.Listener whose connections are in-memory pipes.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// dial returns the client end of a new pipe whose server end Accept returns.
func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	_ = client.Close()
	_ = server.Close()
	return nil, errors.New("the tunnel's forwarder is stopped")
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return hubtunnel.AgentAddress }
