package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// The tunnel library copies every Data message an agent sends into the
// buffer of its connection, and only past MaxBuffer (2 MiB) does it send
// the agent a Pause. A proxied connection whose HTTP client stops reading
// so pins 2 MiB or more of the hub controller (the buffer grows by
// doubling), and the connection limits alone let a few hundred such
// connections take more than the process's memory. bufferBudget bounds the
// sum over every tunnel: it counts, per proxied connection, the bytes the
// agent sent that the hub has not read yet, and past the budget closes the
// connection holding the most, not a tunnel. A client that reads, even one
// slower than the tunnel, also holds up to MaxBuffer at times, so what
// counts is what a connection holds weighted by how long its client has
// taken nothing, up to a second: the stalled connection holding the most
// goes first.
//
// The connection the library dials is known to the hub only as a net.Conn,
// its id only to the tunnel's stream. A dial of a cluster runs alone and
// synchronously (with a deadline the library writes the Connect message in
// the dialing call), so the Connect the guard sees during it is the dial's.

// bufferBudget accounts the bytes held by the tunnels' connections.
type bufferBudget struct {
	limit int64
	log   logr.Logger

	mu    sync.Mutex
	held  int64
	peak  int64
	conns map[connKey]*bufferedConn
	// pending is the connection a dial of each cluster opened, between
	// its Connect and the dial's return.
	pending map[string]*bufferedConn
	// dialing serializes the dials of each cluster.
	dialing sync.Map

	closedOverBudget atomic.Int64
}

// connKey names a connection of a tunnel: its guarded WebSocket and the
// connection's id in it.
type connKey struct {
	g  *guardedConn
	id int64
}

// bufferedConn is one proxied connection's account; the budget's mu guards
// its fields.
type bufferedConn struct {
	key     connKey
	cluster string
	// held is what the agent sent on it that the hub has not read.
	held int64
	// lastRead is when the hub last read from it, or opened it.
	lastRead time.Time
	// conn is the tunnel's connection, once the dial returned it.
	conn net.Conn
	// owner is the proxied request using it, if any.
	owner *proxiedRequest
	gone  bool
}

// proxiedRequest is a request serveProxy is answering.
type proxiedRequest struct {
	cluster, user string
	// abort stops the answer, closing the client's connection.
	abort func()
}

func newBufferBudget(limit int64, log logr.Logger) *bufferBudget {
	return &bufferBudget{limit: limit, log: log, conns: map[connKey]*bufferedConn{}, pending: map[string]*bufferedConn{}}
}

// BufferStats is what the tunnels' connections hold of the hub controller.
type BufferStats struct {
	// Budget bounds Held (--proxy-buffer-budget).
	Budget int64
	// Held is what agents sent on proxied connections that the hub has not
	// yet passed on to their clients, over every tunnel.
	Held int64
	// Peak is the largest Held since the start. It passes Budget by at
	// most one tunnel message: the connection is closed once the message
	// that crossed the budget arrives.
	Peak int64
	// Connections are the proxied connections accounted.
	Connections int
	// ClosedOverBudget counts the connections closed because Held passed
	// Budget.
	ClosedOverBudget int64
	// ClosedStalled counts the connections closed because their client
	// took nothing of the answer for Limits.WriteTimeout.
	ClosedStalled int64
}

func (b *bufferBudget) stats() BufferStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BufferStats{Budget: b.limit, Held: b.held, Peak: b.peak, Connections: len(b.conns), ClosedOverBudget: b.closedOverBudget.Load()}
}

// tunnelBuffers is the budget as one tunnel's guard reports to it.
type tunnelBuffers struct {
	b       *bufferBudget
	cluster string
}

// opened notes the hub's Connect of connection id on g, sent by a dial of
// the tunnel's cluster.
func (t tunnelBuffers) opened(g *guardedConn, id int64) {
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	key := connKey{g, id}
	e := &bufferedConn{key: key, cluster: t.cluster, lastRead: time.Now()}
	b.conns[key] = e
	if old := b.pending[t.cluster]; old != nil {
		b.dropLocked(old)
	}
	b.pending[t.cluster] = e
}

// received charges n bytes the agent sent on connection id of g and closes
// the largest holders while the budget is passed.
func (t tunnelBuffers) received(g *guardedConn, id, n int64) {
	b := t.b
	b.mu.Lock()
	e := b.conns[connKey{g, id}]
	if e == nil {
		// Not a connection the hub opened through the budget, or one it
		// already closed: the tunnel library drops its data.
		b.mu.Unlock()
		return
	}
	e.held += n
	b.held += n
	b.peak = max(b.peak, b.held)
	var victims []evicted
	for b.held > b.limit {
		v := b.largestLocked()
		if v == nil {
			break
		}
		victims = append(victims, evicted{conn: v.conn, owner: v.owner, cluster: v.cluster, held: v.held, total: b.held, idle: time.Since(v.lastRead)})
		b.dropLocked(v)
	}
	b.mu.Unlock()
	if len(victims) > 0 {
		// The guard's lock is held here, and closing a connection writes
		// to the tunnel through it.
		go b.evict(victims)
	}
}

// evicted is a connection closed over the budget.
type evicted struct {
	conn        net.Conn
	owner       *proxiedRequest
	cluster     string
	held, total int64
	idle        time.Duration
}

func (b *bufferBudget) evict(victims []evicted) {
	for _, v := range victims {
		b.closedOverBudget.Add(1)
		kv := []any{"cluster", v.cluster, "held", mib(v.held), "clientIdle", v.idle.Round(time.Millisecond).String(), "heldByAll", mib(v.total), "budget", mib(b.limit)}
		if v.owner != nil {
			kv = append(kv, "user", v.owner.user)
		}
		b.log.Info("Closed the proxied connection whose client lagged most: the tunnels' buffers passed the hub controller's budget (--proxy-buffer-budget)", kv...)
		if v.conn != nil {
			_ = v.conn.Close()
		}
		if v.owner != nil {
			v.owner.abort()
		}
	}
}

// stallPeriod is how long a connection's client must take nothing for
// the connection to count as stalled.
const stallPeriod = time.Second

// largestLocked returns the connection to close: what each holds, weighted
// by how long its client has taken nothing, up to stallPeriod; so of the
// stalled connections the one holding the most, and a client reading now,
// however far behind, last. b.mu is held.
func (b *bufferBudget) largestLocked() *bufferedConn {
	now := time.Now()
	var top *bufferedConn
	var topScore float64
	for _, e := range b.conns {
		idle := min(now.Sub(e.lastRead), stallPeriod)
		score := float64(e.held) * float64(idle) / float64(stallPeriod)
		if top == nil || score > topScore || (score == topScore && e.held > top.held) {
			top, topScore = e, score
		}
	}
	return top
}

// dropLocked stops accounting e; b.mu is held.
func (b *bufferBudget) dropLocked(e *bufferedConn) {
	if e.gone {
		return
	}
	e.gone = true
	b.held -= e.held
	e.held = 0
	// A pending one stays pending: its dial finds it gone.
	delete(b.conns, e.key)
}

func (b *bufferBudget) drop(e *bufferedConn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropLocked(e)
}

// dialTimeout bounds the write of a dial's Connect message, as the tunnel
// library's own default does.
const dialTimeout = time.Minute

// dial opens a connection of cluster's tunnel with dial and accounts it.
func (b *bufferBudget) dial(ctx context.Context, cluster string, dial func(context.Context) (net.Conn, error)) (net.Conn, error) {
	lock, _ := b.dialing.LoadOrStore(cluster, &sync.Mutex{})
	mu := lock.(*sync.Mutex)
	mu.Lock()
	defer mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dialTimeout)
		defer cancel()
	}
	conn, err := dial(ctx)
	b.mu.Lock()
	e := b.pending[cluster]
	delete(b.pending, cluster)
	if e != nil && (err != nil || e.gone) {
		b.dropLocked(e)
		if err == nil {
			err = errors.New("the hub closed the connection over its buffer budget as it opened")
		}
	}
	if err == nil && e != nil {
		e.conn = conn
	}
	b.mu.Unlock()
	switch {
	case err != nil:
		if conn != nil {
			_ = conn.Close()
		}
		return nil, err
	case e == nil:
		// Only a tunnel without the guard opens a connection unseen.
		b.log.Info("A proxied connection was opened outside the buffer budget", "cluster", cluster)
		return conn, nil
	}
	return &budgetedConn{Conn: conn, b: b, e: e}, nil
}

// budgetedConn is a tunnel's connection whose reads are credited to its
// account.
type budgetedConn struct {
	net.Conn
	b *bufferBudget
	e *bufferedConn
}

// Read reads and credits what it read.
func (c *budgetedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.b.mu.Lock()
		if e := c.e; !e.gone {
			took := min(int64(n), e.held)
			e.held -= took
			c.b.held -= took
			e.lastRead = time.Now()
		}
		c.b.mu.Unlock()
	}
	return n, err
}

// Close closes the connection and its account.
func (c *budgetedConn) Close() error {
	c.b.drop(c.e)
	return c.Conn.Close()
}

// own records r as the request using the connection, until disown.
func (c *budgetedConn) own(r *proxiedRequest) {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	c.e.owner = r
}

func (c *budgetedConn) disown(r *proxiedRequest) {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if c.e.owner == r {
		c.e.owner = nil
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
