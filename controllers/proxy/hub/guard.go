package hub

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// The tunnel library (remotedialer) reads whatever an agent sends: it sets
// no WebSocket read limit, reads a SyncConnections message whole, and
// buffers Data for a connection without bound when the agent ignores the
// Pause the hub sends it. guardedConn is the hub's end of a tunnel's
// connection below the library: it reads the frames as they pass and closes
// the connection, that tunnel only, when the agent breaks a limit.
//
// What would go upstream: a read limit on the server's WebSocket
// (Conn.SetReadLimit), a bound on a SyncConnections body, and closing a
// connection whose buffer passes a multiple of MaxBuffer, as the library's
// own log line there already detects.

// MaxTunnelMessage bounds one tunnel message from an agent. The library
// writes at most 8 KiB of Data per message, and a SyncConnections message
// holds one varint per open connection.
const MaxTunnelMessage = 256 << 10

// PausedBudget bounds the bytes an agent may send on one connection after
// the hub paused it: what was in flight when the Pause was sent, never more.
// It is counted per connection: an agent honoring every Pause may have
// that much in flight on each of many connections paused at once, as when
// many proxied clients stop reading, and the buffer budget, not this
// check, bounds the memory they hold together (budget.go).
const PausedBudget = 32 << 20

// guardedConn passes the bytes of a tunnel's connection through and
// enforces MaxTunnelMessage and PausedBudget.
type guardedConn struct {
	net.Conn
	// src is what Read reads: the bytes the HTTP server had buffered
	// before the upgrade, then the connection.
	src io.Reader
	// broke is called once, with the limit the agent broke.
	broke func(error)
	// conns learns of the tunnel's connections and what the agent sends
	// on them, if set.
	conns connTracker

	in, out hubtunnel.FrameScanner

	mu     sync.Mutex
	paused map[int64]int64
	err    error
	once   sync.Once
}

// connTracker follows a tunnel's connections; it is called with the
// guard's lock held.
type connTracker interface {
	// opened is told of the hub's Connect of connection id.
	opened(g *guardedConn, id int64)
	// received is told of n bytes of Data the agent sent on connection id.
	received(g *guardedConn, id, n int64)
}

// guard wraps conn, whose reader had buffered the bytes in rw, as the hub's
// end of a tunnel, and returns the buffered reader and writer the WebSocket
// library reads and writes it through.
func guard(conn net.Conn, rw *bufio.ReadWriter, broke func(error), conns connTracker) (*guardedConn, *bufio.ReadWriter) {
	src := io.Reader(conn)
	if n := rw.Reader.Buffered(); n > 0 {
		early, _ := rw.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)
	}
	g := &guardedConn{
		Conn: conn, src: src, broke: broke, conns: conns,
		in:     hubtunnel.FrameScanner{Masked: true, MaxMessage: MaxTunnelMessage},
		out:    hubtunnel.FrameScanner{SkipHTTP: true},
		paused: map[int64]int64{},
	}
	return g, bufio.NewReadWriter(bufio.NewReader(g), bufio.NewWriter(g))
}

// Read reads from the agent and checks what it read.
func (g *guardedConn) Read(p []byte) (int, error) {
	n, err := g.src.Read(p)
	if n > 0 {
		g.mu.Lock()
		if g.err == nil {
			if serr := g.in.Scan(p[:n], inbound{g}); serr != nil {
				g.err = fmt.Errorf("the agent broke the tunnel's protocol or limits: %w", serr)
			}
		}
		gerr := g.err
		g.mu.Unlock()
		if gerr != nil {
			g.violated(gerr)
			return 0, gerr
		}
	}
	return n, err
}

// Write notes the hub's Pause, Resume and Error messages and writes.
func (g *guardedConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	// The hub's own stream cannot break a limit; a scanner error here
	// only stops the bookkeeping of paused connections.
	_ = g.out.Scan(p, outbound{g})
	g.mu.Unlock()
	return g.Conn.Write(p)
}

// violated closes the connection and reports why, once.
func (g *guardedConn) violated(err error) {
	g.once.Do(func() {
		_ = g.Close()
		if g.broke != nil {
			g.broke(err)
		}
	})
}

// inbound counts what the agent sends; g.mu is held.
type inbound struct{ g *guardedConn }

func (i inbound) Message(connID int64, typ hubtunnel.MessageType) {
	if typ == hubtunnel.MessageError {
		i.g.forget(connID)
	}
}

func (i inbound) Payload(connID int64, typ hubtunnel.MessageType, n int64) {
	g := i.g
	if typ != hubtunnel.MessageData {
		return
	}
	if g.conns != nil {
		g.conns.received(g, connID, n)
	}
	sent, ok := g.paused[connID]
	if !ok {
		return
	}
	sent += n
	g.paused[connID] = sent
	if sent > PausedBudget && g.err == nil {
		g.err = fmt.Errorf("the agent sent %d bytes on connection %d after the hub paused it, past the budget of %d: it ignores the hub's Pause", sent, connID, PausedBudget)
	}
}

// outbound notes what the hub sends; g.mu is held.
type outbound struct{ g *guardedConn }

func (o outbound) Message(connID int64, typ hubtunnel.MessageType) {
	switch typ {
	case hubtunnel.MessageConnect:
		if o.g.conns != nil {
			o.g.conns.opened(o.g, connID)
		}
	case hubtunnel.MessagePause:
		if _, ok := o.g.paused[connID]; !ok {
			o.g.paused[connID] = 0
		}
	case hubtunnel.MessageResume, hubtunnel.MessageError:
		o.g.forget(connID)
	}
}

func (outbound) Payload(int64, hubtunnel.MessageType, int64) {}

// forget drops a connection from the paused ones; g.mu is held.
func (g *guardedConn) forget(connID int64) {
	delete(g.paused, connID)
}

// hijackRecorder keeps the connection the WebSocket upgrade takes over, so
// that a newer tunnel of the same cluster, or its revocation, can close
// it, and puts the connection behind guardedConn's limits.
type hijackRecorder struct {
	http.ResponseWriter
	// broke is called when the agent breaks a limit of the tunnel.
	broke func(error)
	// conns follows the tunnel's connections, if set.
	conns connTracker

	mu   sync.Mutex
	conn net.Conn
	done bool
}

// Hijack takes over the connection, guards it and records it.
func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over for a WebSocket")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		_ = conn.Close()
		return nil, nil, errors.New("a newer tunnel of the cluster attached")
	}
	g, grw := guard(conn, rw, h.broke, h.conns)
	h.conn = g
	return g, grw, nil
}

// close closes the recorded connection, or the one Hijack takes later.
func (h *hijackRecorder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = true
	if h.conn != nil {
		_ = h.conn.Close()
	}
}
