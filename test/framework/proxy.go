package framework

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a port on the target's own address
// (127.0.0.1, or the bridge of an environment with nodes, which the nodes'
// Pods reach) to a target address, and can cut the path off, as a network
// partition does, for the clients pointed at it. A TLS client pointed at the
// proxy still verifies the target's certificate: the proxy only copies
// bytes, and every API server of an Environment serves a certificate valid
// for its address whatever the port.
type Proxy struct {
	target string
	ln     net.Listener

	mu      sync.Mutex
	blocked bool
	closed  bool
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// StartProxy listens on a free port of target's host and forwards every
// connection to target (host:port) until Close.
func StartProxy(target string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("proxy target %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for a proxy to %s: %w", target, err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	return p, nil
}

// StartProxyForTest starts a Proxy to target and closes it when t ends. It
// fails t if the proxy cannot listen.
func StartProxyForTest(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := StartProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Addr returns the proxy's address, <target host>:<port>.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Block cuts the path: every open connection is closed, and each new one is
// closed as soon as it is accepted, so clients see their connections reset
// until Unblock.
func (p *Proxy) Block() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// Unblock forwards new connections again.
func (p *Proxy) Unblock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = false
}

// Close stops listening, closes every connection and waits until the
// forwarding goroutines end. It is safe to call more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// serve accepts connections until the listener is closed.
func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.wg.Go(func() { p.forward(in) })
	}
}

// forward copies bytes both ways between in and a new connection to the
// target, until either side closes or Block or Close cuts them.
func (p *Proxy) forward(in net.Conn) {
	if !p.track(in) {
		_ = in.Close()
		return
	}
	defer p.untrackAndClose(in)
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(out) {
		_ = out.Close()
		return
	}
	defer p.untrackAndClose(out)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	// One direction ending ends the connection: closing both sides (the
	// deferred calls) ends the other copy.
	<-done
}

// track records c as open, unless the proxy is blocked or closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blocked || p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// untrackAndClose forgets and closes c.
func (p *Proxy) untrackAndClose(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}
