package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// serveAttach accepts cluster's tunnel from its agent.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request, c *caller, cluster string) {
	if r.Method != http.MethodGet {
		writeStatus(w, http.StatusMethodNotAllowed, "a tunnel attaches with a WebSocket GET")
		return
	}
	if !s.admitAgent(w, r, c, hubtunnel.AttachSubresource, cluster, "attach its tunnel") {
		return
	}
	log := s.log.WithValues("cluster", cluster, "agent", c.user)
	log.Info("Tunnel attached")
	t := s.newTunnel(cluster, c, w, log)
	defer s.attached(t)()
	s.tunnels.ServeHTTP(t.rec, r.WithContext(context.WithValue(r.Context(), attachingCluster{}, cluster)))
	log.Info("Tunnel closed")
}

// admitAgent says whether c is cluster's agent (its certificate user or its
// token identity: identity.Classify, which keys on the user name alone),
// may get subresource of cluster by the hub's RBAC, and whether the hub
// accepts the cluster; it writes the refusal, naming what c may not do,
// when one fails.
func (s *Server) admitAgent(w http.ResponseWriter, r *http.Request, c *caller, subresource, cluster, what string) bool {
	if req := identity.Classify(c.user); req.Kind != identity.Agent || req.Cluster != cluster {
		writeStatus(w, http.StatusForbidden, fmt.Sprintf("only the agent of cluster %s may %s; %q is not its agent identity", cluster, what, c.user))
		return false
	}
	if !s.authorize(w, r, c, "get", subresource, cluster) {
		return false
	}
	if reason, err := s.refused(r.Context(), cluster); err != nil || reason != "" {
		code, msg := http.StatusForbidden, fmt.Sprintf("cluster %s may not %s: %s", cluster, what, reason)
		if err != nil {
			code, msg = http.StatusServiceUnavailable, err.Error()
		}
		writeStatus(w, code, msg)
		return false
	}
	return true
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

// acquireConn counts a request against the connection limits of cluster
// and user; past them it answers 429 with Retry-After and returns false.
func (s *Server) acquireConn(w http.ResponseWriter, cluster, user string) (release func(), ok bool) {
	release, err := s.conns.acquire(cluster, user)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, err.Error())
		return nil, false
	}
	return release, true
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
	release, ok := s.acquireConn(w, cluster, c.user)
	if !ok {
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
