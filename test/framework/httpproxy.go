package framework

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// HTTPProxy is an HTTP forward proxy that serves CONNECT only, as the
// proxies between a managed cluster and its hub do. It reaches each
// Cluster's Hostname, which nothing else resolves, and every address
// literally, and counts the tunnels it opened per target. It listens on a
// free port of the host it is given (the bridge of an environment with
// nodes, which the nodes' Pods reach).
type HTTPProxy struct {
	srv   *http.Server
	ln    net.Listener
	hosts map[string]string

	mu      sync.Mutex
	tunnels map[string]int
	// open holds the tunnels' connections, which Close closes: the HTTP
	// server does not track hijacked ones.
	open   map[net.Conn]struct{}
	closed bool
	copies sync.WaitGroup
}

// StartHTTPProxy listens on a free port of host and maps each cluster's
// Hostname to its API server's address.
func StartHTTPProxy(host string, clusters ...*Cluster) (*HTTPProxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for an HTTP proxy on %s: %w", host, err)
	}
	p := &HTTPProxy{ln: ln, hosts: map[string]string{}, tunnels: map[string]int{}, open: map[net.Conn]struct{}{}}
	for _, c := range clusters {
		p.hosts[c.Hostname()] = c.bindIP.String()
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// StartHTTPProxyForTest starts an HTTPProxy on host for clusters and closes
// it when t ends. It fails t if the proxy cannot listen.
func StartHTTPProxyForTest(t testing.TB, host string, clusters ...*Cluster) *HTTPProxy {
	t.Helper()
	p, err := StartHTTPProxy(host, clusters...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// URL returns the proxy's URL, http://<host>:<port>.
func (p *HTTPProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Tunnels returns how many tunnels the proxy opened to target, a host:port
// as the client asked for it.
func (p *HTTPProxy) Tunnels(target string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tunnels[target]
}

// Close stops the proxy and closes every tunnel.
func (p *HTTPProxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.copies.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// track records the tunnel's connections for Close; it reports false, and
// closes them, when the proxy is closed already.
func (p *HTTPProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.open[c] = struct{}{}
	}
	return true
}

// untrack closes the tunnel's connections and forgets them.
func (p *HTTPProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.open, c)
	}
}

// serveHTTP opens a tunnel for a CONNECT request and refuses anything else.
func (p *HTTPProxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "this proxy serves CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ip, ok := p.hosts[host]; ok {
		host = ip
	}
	dialer := net.Dialer{Timeout: 10 * time.Second}
	out, err := dialer.DialContext(r.Context(), "tcp", net.JoinHostPort(host, port))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		out.Close()
		http.Error(w, "cannot take over the connection", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		out.Close()
		return
	}
	if !p.track(in, out) {
		return
	}
	p.mu.Lock()
	p.tunnels[r.Host]++
	p.mu.Unlock()
	if _, err := io.WriteString(in, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.untrack(in, out)
		return
	}
	// Either side ending ends the tunnel. What the client sent after its
	// request, already buffered, goes first.
	p.copies.Add(2)
	go func() {
		defer p.copies.Done()
		_, _ = io.Copy(out, io.MultiReader(buf.Reader, in))
		p.untrack(in, out)
	}()
	go func() {
		defer p.copies.Done()
		_, _ = io.Copy(in, out)
		p.untrack(in, out)
	}()
}
