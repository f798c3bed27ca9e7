package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	chunks   *chunkServer
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
	// Reader reads ConfigMap kube-system/extension-apiserver-authentication,
	// the ServiceAccounts of token agents, and the ManifestWorks, sets,
	// PlacementDecisions, ControllerRevisions and ManifestChunks behind a
	// chunk request, uncached, as the hub tunnel.
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
	s.chunks = newChunkServer(s.limits.BufferBudget)
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
	subresource, rest, _ := strings.Cut(rest, "/")
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
	case hubtunnel.ChunksSubresource:
		s.serveChunk(w, r, c, cluster, rest)
	default:
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("managedclusters/%s has the subresources %s, %s and %s, not %q",
			cluster, hubtunnel.ProxySubresource, hubtunnel.AttachSubresource, hubtunnel.ChunksSubresource, subresource))
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
