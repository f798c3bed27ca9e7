package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rancher/remotedialer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Server serves the aggregated API. Every replica of the hub tunnel serves
// it; an agent's tunnel ends at the replica its connection reached.
type Server struct {
	front    *frontProxy
	review   *reviewer
	tunnels  *remotedialer.Server
	log      logr.Logger
	reader   client.Reader
	clusters cache.Cache
	limits   Limits
	conns    *connLimiter
	buffers  *bufferBudget
	// stalled counts the proxied connections closed because their client
	// took nothing of the answer for Limits.WriteTimeout.
	stalled atomic.Int64

	// transports holds one HTTP transport per cluster, which dials through
	// the cluster's current tunnel.
	transports sync.Map

	// attachedTunnels holds each cluster's newest tunnel.
	mu              sync.Mutex
	attachedTunnels map[string]*tunnel
}

// Options are what a Server needs.
type Options struct {
	// Reviews asks the SubjectAccessReviews, as the hub tunnel.
	Reviews client.Client
	// Reader reads ConfigMap kube-system/extension-apiserver-authentication
	// and the ServiceAccounts of token agents, uncached, as the hub
	// tunnel.
	Reader client.Reader
	// Clusters is the cache ManagedClusters are read and watched from; a
	// tunnel closes when its cluster is denied or deleted.
	Clusters cache.Cache
	// Limits bound the tunnels and proxied connections; zero fields take
	// DefaultLimits'.
	Limits Limits
	// Log is the server's logger.
	Log logr.Logger
}

// New returns the server.
func New(o Options) *Server {
	s := &Server{
		front: &frontProxy{reader: o.Reader}, review: &reviewer{client: o.Reviews}, log: o.Log,
		reader: o.Reader, clusters: o.Clusters, limits: o.Limits.withDefaults(),
	}
	s.conns = newConnLimiter(s.limits.ConnectionsPerCluster, s.limits.ConnectionsPerUser)
	s.buffers = newBufferBudget(s.limits.BufferBudget, o.Log)
	o.Log.Info("Proxied connections' limits", "perCluster", s.limits.ConnectionsPerCluster, "perUser", s.limits.ConnectionsPerUser,
		"bufferBudget", mib(s.limits.BufferBudget), "writeTimeout", s.limits.WriteTimeout.String())
	s.tunnels = remotedialer.New(func(r *http.Request) (string, bool, error) {
		cluster, _ := r.Context().Value(attachingCluster{}).(string)
		return cluster, cluster != "", nil
	}, func(w http.ResponseWriter, r *http.Request, code int, err error) {
		writeStatus(w, code, err.Error())
	})
	return s
}

// attachingCluster keys the cluster an authorized attach request is for in
// its context, for the tunnel server's authorizer.
type attachingCluster struct{}

// Handler is where a server's paths are mounted.
type Handler interface {
	Register(path string, hook http.Handler)
}

// Register mounts the API's paths on mux: /apis/ (discovery and the
// cluster subresources) and the OpenAPI documents the API server's
// aggregator reads.
func (s *Server) Register(mux Handler) {
	mux.Register("/apis/", s)
	mux.Register("/apis", s)
	mux.Register("/openapi/v2", http.HandlerFunc(serveOpenAPIV2))
	mux.Register("/openapi/v3", http.HandlerFunc(serveOpenAPIV3))
}

// Start closes the tunnels of clusters the hub denies or deletes as it
// sees them, authorizes each attached tunnel again every
// Limits.Reauthorize and closes it at the end of its lifetime, until ctx
// ends. Then it closes every tunnel that ends here: the HTTP server's
// shutdown leaves the connections WebSocket upgrades took over alone, and
// the agents attach again to whichever replica serves next. Every replica
// runs it.
func (s *Server) Start(ctx context.Context) error {
	defer s.closeAll()
	if err := s.watchClusters(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped before the ManagedCluster cache synced: a shutdown,
			// not a failure.
			return nil
		}
		return err
	}
	ticker := time.NewTicker(s.limits.Reauthorize)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			s.reauthorize(ctx)
		}
	}
}

// closeAll closes every tunnel that ends here.
func (s *Server) closeAll() {
	s.mu.Lock()
	tunnels := s.attachedTunnels
	s.attachedTunnels = nil
	s.mu.Unlock()
	for _, t := range tunnels {
		t.rec.close()
	}
}

// NeedLeaderElection is false: every replica serves the API.
func (s *Server) NeedLeaderElection() bool { return false }

// Clusters returns the clusters whose tunnel ends here.
func (s *Server) Clusters() []string { return s.tunnels.ListClients() }

// Connected reports whether cluster's tunnel ends here.
func (s *Server) Connected(cluster string) bool { return s.tunnels.HasSession(cluster) }

// Buffers returns what the proxied connections hold of the hub controller
// and how many of them it closed.
func (s *Server) Buffers() BufferStats {
	stats := s.buffers.stats()
	stats.ClosedStalled = s.stalled.Load()
	return stats
}

// RegisterMetrics adds the tunnel's gauges and counters to
// controller-runtime's metrics registry.
func (s *Server) RegisterMetrics() error {
	collectors := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocm_hub_tunnels",
			Help: "Managed clusters whose agent's tunnel ends at this hub controller.",
		}, func() float64 { return float64(len(s.tunnels.ListClients())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocm_hub_tunnel_buffered_bytes",
			Help: "Bytes agents sent on proxied connections that this hub controller has not yet passed on to their clients, over every tunnel.",
		}, func() float64 { return float64(s.buffers.stats().Held) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocm_hub_tunnel_buffer_budget_bytes",
			Help: "The bound of ocm_hub_tunnel_buffered_bytes (--proxy-buffer-budget); past it the connection holding the most is closed.",
		}, func() float64 { return float64(s.buffers.limit) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "ocm_hub_proxy_connections_closed_total",
			Help:        "Proxied connections this hub controller closed: over the tunnels' buffer budget, or because their client took nothing of the answer for --proxy-write-timeout.",
			ConstLabels: prometheus.Labels{"reason": "buffer-budget"},
		}, func() float64 { return float64(s.buffers.closedOverBudget.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "ocm_hub_proxy_connections_closed_total",
			Help:        "Proxied connections this hub controller closed: over the tunnels' buffer budget, or because their client took nothing of the answer for --proxy-write-timeout.",
			ConstLabels: prometheus.Labels{"reason": "write-timeout"},
		}, func() float64 { return float64(s.stalled.Load()) }),
	}
	for _, c := range collectors {
		if err := metrics.Registry.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return fmt.Errorf("register the tunnel's metrics: %w", err)
			}
		}
	}
	return nil
}

// ServeHTTP routes /apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/<cluster>/<subresource>[/<path>]
// and the discovery documents.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case "/apis":
		writeJSON(w, http.StatusOK, groupList())
		return
	case "/apis/" + hubtunnel.Group:
		writeJSON(w, http.StatusOK, apiGroup())
		return
	case "/apis/" + hubtunnel.GroupVersion:
		writeJSON(w, http.StatusOK, resourceList())
		return
	}
	prefix := "/apis/" + hubtunnel.GroupVersion + "/" + hubtunnel.Resource + "/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("%s is not a path of %s", r.URL.Path, hubtunnel.GroupVersion))
		return
	}
	cluster, rest, _ := strings.Cut(rest, "/")
	subresource, _, _ := strings.Cut(rest, "/")
	if msgs := validation.IsDNS1123Label(cluster); len(msgs) > 0 {
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("%q is not a cluster name: %s", cluster, msgs[0]))
		return
	}
	c, err := s.front.authenticate(r)
	if err != nil {
		code := http.StatusUnauthorized
		if !errors.Is(err, errUnauthenticated) {
			code = http.StatusServiceUnavailable
		}
		s.log.V(1).Info("Refused a request", "path", r.URL.Path, "reason", err.Error())
		writeStatus(w, code, err.Error())
		return
	}
	switch subresource {
	case hubtunnel.ProxySubresource:
		s.serveProxy(w, r, c, cluster)
	case hubtunnel.AttachSubresource:
		s.serveAttach(w, r, c, cluster)
	default:
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("managedclusters/%s has the subresources %s and %s, not %q",
			cluster, hubtunnel.ProxySubresource, hubtunnel.AttachSubresource, subresource))
	}
}

// authorize asks whether c may use verb on subresource of cluster and
// writes the refusal when it may not.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, c *caller, verb, subresource, cluster string) bool {
	ok, reason, err := s.review.allowed(r.Context(), c, verb, subresource, cluster)
	if err != nil {
		writeStatus(w, http.StatusServiceUnavailable, err.Error())
		return false
	}
	if !ok {
		msg := fmt.Sprintf("user %q cannot %s managedclusters/%s %q in API group %q", c.user, verb, subresource, cluster, hubtunnel.Group)
		if reason != "" {
			msg += ": " + reason
		}
		writeStatus(w, http.StatusForbidden, msg)
		return false
	}
	return true
}

// serveAttach accepts cluster's tunnel from its agent.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request, c *caller, cluster string) {
	if r.Method != http.MethodGet {
		writeStatus(w, http.StatusMethodNotAllowed, "a tunnel attaches with a WebSocket GET")
		return
	}
	if req := identity.Classify(c.user); req.Kind != identity.Agent || req.Cluster != cluster {
		writeStatus(w, http.StatusForbidden, fmt.Sprintf("only the agent of cluster %s may attach its tunnel; %q is not its agent identity", cluster, c.user))
		return
	}
	if !s.authorize(w, r, c, "get", hubtunnel.AttachSubresource, cluster) {
		return
	}
	if reason, err := s.refused(r.Context(), cluster); err != nil || reason != "" {
		code, msg := http.StatusForbidden, fmt.Sprintf("cluster %s may not attach its tunnel: %s", cluster, reason)
		if err != nil {
			code, msg = http.StatusServiceUnavailable, err.Error()
		}
		writeStatus(w, code, msg)
		return
	}
	log := s.log.WithValues("cluster", cluster, "agent", c.user)
	log.Info("Tunnel attached")
	t := s.newTunnel(cluster, c, w, log)
	defer s.attached(t)()
	s.tunnels.ServeHTTP(t.rec, r.WithContext(context.WithValue(r.Context(), attachingCluster{}, cluster)))
	log.Info("Tunnel closed")
}

// attached makes t the newest of its cluster's tunnels and closes the older
// ones: an agent attaches again when it restarts or loses its connection,
// and the tunnel server would otherwise keep dialing through the oldest,
// which may be dead without either end of this connection knowing. It
// returns the function that forgets the tunnel.
func (s *Server) attached(t *tunnel) func() {
	s.mu.Lock()
	old := s.attachedTunnels[t.cluster]
	if s.attachedTunnels == nil {
		s.attachedTunnels = map[string]*tunnel{}
	}
	s.attachedTunnels[t.cluster] = t
	s.mu.Unlock()
	if old != nil {
		old.rec.close()
	}
	return func() {
		s.mu.Lock()
		if s.attachedTunnels[t.cluster] == t {
			delete(s.attachedTunnels, t.cluster)
		}
		s.mu.Unlock()
	}
}

// serveProxy sends the request through cluster's tunnel.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request, c *caller, cluster string) {
	verb := hubtunnel.ProxyVerb(r.Method)
	if !s.authorize(w, r, c, verb, hubtunnel.ProxySubresource, cluster) {
		return
	}
	if !s.tunnels.HasSession(cluster) {
		writeStatus(w, http.StatusServiceUnavailable, fmt.Sprintf(
			"cluster %s has no tunnel to the hub: its agent is not connected, or its Klusterlet turns the HubTunnel feature off (spec.registrationConfiguration.featureGates)", cluster))
		return
	}
	release, err := s.conns.acquire(cluster, c.user)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, err.Error())
		return
	}
	defer release()
	// The client must keep taking the answer; the connection through the
	// tunnel is the request's while it runs, and the buffer budget may end
	// it.
	sw := newStallWriter(w, s.limits.WriteTimeout)
	req := &proxiedRequest{cluster: cluster, user: c.user, abort: sw.abort}
	var owned atomic.Pointer[budgetedConn]
	defer func() {
		if bc := owned.Load(); bc != nil {
			bc.disown(req)
		}
		if sw.finish() {
			s.stalled.Add(1)
			s.log.Info("Closed a proxied connection whose client took nothing of the answer for the hub controller's write timeout (--proxy-write-timeout)",
				"cluster", cluster, "user", c.user, "timeout", s.limits.WriteTimeout.String())
		}
	}()
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if bc, ok := info.Conn.(*budgetedConn); ok {
				bc.own(req)
				if old := owned.Swap(bc); old != nil && old != bc {
					old.disown(req)
				}
			}
		},
	}))
	base := hubtunnel.ProxyPath(cluster)
	rawRest := strings.TrimPrefix(r.URL.EscapedPath(), base)
	if rawRest == "" {
		rawRest = "/"
	}
	rest, err := url.PathUnescape(rawRest)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, fmt.Sprintf("path %s: %v", rawRest, err))
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: hubtunnel.AgentAddress, Path: rest, RawPath: rawRest, RawQuery: r.URL.RawQuery}
			pr.Out.Host = hubtunnel.AgentAddress
			hubtunnel.StripCredentials(pr.Out.Header)
			pr.Out.Header.Set(hubtunnel.UserHeader, c.user)
			for _, g := range c.groups {
				pr.Out.Header.Add(hubtunnel.GroupHeader, g)
			}
		},
		Transport:     s.transport(cluster),
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			writeStatus(w, http.StatusBadGateway, fmt.Sprintf("cannot reach cluster %s through its tunnel: %v", cluster, err))
		},
	}
	proxy.ServeHTTP(sw, r)
}

// transport returns the transport that dials through cluster's tunnel. It
// looks the tunnel up at every dial, so it outlives reconnections.
func (s *Server) transport(cluster string) http.RoundTripper {
	if t, ok := s.transports.Load(cluster); ok {
		return t.(http.RoundTripper)
	}
	dial := s.tunnels.Dialer(cluster)
	t := &http.Transport{
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			return s.buffers.dial(ctx, cluster, func(ctx context.Context) (net.Conn, error) { return dial(ctx, network, address) })
		},
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	actual, _ := s.transports.LoadOrStore(cluster, t)
	return actual.(http.RoundTripper)
}

// writeStatus writes a metav1.Status, as the API server answers errors, so
// kubectl prints its message.
func writeStatus(w http.ResponseWriter, code int, message string) {
	reason := metav1.StatusReasonUnknown
	switch code {
	case http.StatusUnauthorized:
		reason = metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		reason = metav1.StatusReasonForbidden
	case http.StatusNotFound:
		reason = metav1.StatusReasonNotFound
	case http.StatusMethodNotAllowed:
		reason = metav1.StatusReasonMethodNotAllowed
	case http.StatusBadRequest:
		reason = metav1.StatusReasonBadRequest
	case http.StatusServiceUnavailable:
		reason = metav1.StatusReasonServiceUnavailable
	case http.StatusTooManyRequests:
		reason = metav1.StatusReasonTooManyRequests
	}
	writeJSON(w, code, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: message,
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
