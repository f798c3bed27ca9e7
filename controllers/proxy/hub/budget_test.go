package hub

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	waitFor = 5 * time.Second
	tick    = 10 * time.Millisecond
)

// fakeConn is a tunnel connection whose reads return what it is given.
type fakeConn struct {
	net.Conn
	data   []byte
	closed atomic.Bool
}

func (c *fakeConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

// open dials a connection of cluster through b, the tunnel's guard g
// seeing its Connect as id, as the tunnel library writes it during the
// dial.
func open(t *testing.T, b *bufferBudget, g *guardedConn, cluster string, id int64) (*budgetedConn, *fakeConn) {
	t.Helper()
	raw := &fakeConn{}
	conn, err := b.dial(context.Background(), cluster, func(ctx context.Context) (net.Conn, error) {
		_, ok := ctx.Deadline()
		assert.True(t, ok, "the tunnel library dials synchronously only with a deadline")
		tunnelBuffers{b, cluster}.opened(g, id)
		return raw, nil
	})
	require.NoError(t, err)
	bc, ok := conn.(*budgetedConn)
	require.True(t, ok, "the dialed connection is accounted")
	return bc, raw
}

func TestBufferBudget(t *testing.T) {
	const limit = 10 << 20
	b := newBufferBudget(limit, logr.Discard())
	g1, g2 := &guardedConn{}, &guardedConn{}
	slow, slowRaw := open(t, b, g1, "cluster1", 2)
	fast, _ := open(t, b, g1, "cluster1", 3)
	other, otherRaw := open(t, b, g2, "cluster2", 2)
	var aborted atomic.Int32
	owner := &proxiedRequest{cluster: "cluster1", user: "mallory", abort: func() { aborted.Add(1) }}
	slow.own(owner)
	// Their clients have taken nothing for a while.
	b.mu.Lock()
	for _, e := range b.conns {
		e.lastRead = time.Now().Add(-stallPeriod)
	}
	b.mu.Unlock()

	in1, in2 := tunnelBuffers{b, "cluster1"}, tunnelBuffers{b, "cluster2"}
	// The same connection id on another tunnel is another connection.
	in1.received(g1, 2, 4<<20)
	in2.received(g2, 2, 3<<20)
	in1.received(g1, 3, 2<<20)
	assert.Equal(t, int64(9<<20), b.stats().Held)
	// What the hub reads is no longer held, and its client reads now.
	fast.Conn.(*fakeConn).data = make([]byte, 1<<20)
	n, err := io.Copy(io.Discard, fast)
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), n)
	assert.Equal(t, int64(8<<20), b.stats().Held)
	// Data for a connection the hub never opened is not charged.
	in1.received(g1, 99, 1<<20)
	assert.Equal(t, int64(8<<20), b.stats().Held)

	// Past the budget, the connection holding the most is closed, and
	// its request aborted, whichever connection the bytes came for.
	in2.received(g2, 2, 3<<20)
	s := b.stats()
	assert.Equal(t, int64(11<<20), s.Peak)
	assert.Equal(t, int64(5<<20), s.Held, "cluster2's connection (6 MiB) was closed")
	require.Eventually(t, func() bool { return otherRaw.closed.Load() }, waitFor, tick)
	assert.False(t, slowRaw.closed.Load())
	assert.Equal(t, int64(1), b.stats().ClosedOverBudget)
	// Later data for it is not charged.
	in2.received(g2, 2, 8<<20)
	assert.Equal(t, int64(5<<20), b.stats().Held)
	require.NoError(t, other.Close())

	in1.received(g1, 2, 6<<20)
	require.Eventually(t, func() bool { return slowRaw.closed.Load() && aborted.Load() == 1 }, waitFor, tick)
	assert.Equal(t, int64(1<<20), b.stats().Held)

	// A request that ended no longer owns its connection.
	fast.own(owner)
	fast.disown(owner)
	require.NoError(t, fast.Close())
	s = b.stats()
	assert.Zero(t, s.Held)
	assert.Zero(t, s.Connections)
	assert.Empty(t, b.pending)
}

func TestBufferBudgetDial(t *testing.T) {
	b := newBufferBudget(8<<20, logr.Discard())
	g := &guardedConn{}
	// A failed dial leaves no account behind.
	_, err := b.dial(context.Background(), "cluster1", func(context.Context) (net.Conn, error) {
		tunnelBuffers{b, "cluster1"}.opened(g, 2)
		return nil, errors.New("the tunnel closed")
	})
	require.Error(t, err)
	assert.Zero(t, b.stats().Connections)
	// A connection closed over the budget while it was being opened is
	// not handed out.
	raw := &fakeConn{}
	_, err = b.dial(context.Background(), "cluster1", func(context.Context) (net.Conn, error) {
		tb := tunnelBuffers{b, "cluster1"}
		tb.opened(g, 3)
		tb.received(g, 3, 9<<20)
		return raw, nil
	})
	require.ErrorContains(t, err, "buffer budget")
	assert.True(t, raw.closed.Load())
	assert.Zero(t, b.stats().Connections)
}

func TestCgroupMemoryLimit(t *testing.T) {
	write := func(t *testing.T, path, data string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	}
	tests := []struct {
		name   string
		cgroup string
		files  map[string]string
		want   int64
		found  bool
	}{
		{"v2 container, namespaced", "0::/\n", map[string]string{"memory.max": "536870912\n"}, 512 << 20, true},
		{"v2 process path", "0::/kubepods/pod1/c1\n", map[string]string{"kubepods/pod1/c1/memory.max": "268435456\n"}, 256 << 20, true},
		{"v2 unlimited", "0::/\n", map[string]string{"memory.max": "max\n"}, 0, false},
		{"v1", "4:memory:/docker/abc\n3:cpu:/\n", map[string]string{"memory/docker/abc/memory.limit_in_bytes": "1073741824\n"}, 1 << 30, true},
		{"v1 namespaced", "4:cpuacct,memory:/docker/abc\n", map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30, true},
		{"v1 unlimited", "4:memory:/\n", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"no cgroup files", "0::/\n", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "proc-cgroup"), tt.cgroup)
			for path, data := range tt.files {
				write(t, filepath.Join(dir, "root", path), data)
			}
			got, found := cgroupMemoryLimit(filepath.Join(dir, "proc-cgroup"), filepath.Join(dir, "root"))
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBufferBudgetFor(t *testing.T) {
	assert.Equal(t, int64(64<<20), BufferBudgetFor(512<<20))
	assert.Equal(t, int64(MinBufferBudget), BufferBudgetFor(16<<20))
	assert.Positive(t, DefaultBufferBudget())
}

// TestBufferBudgetSparesReaders checks that a client that reads keeps its
// connection over one that stalled with less.
func TestBufferBudgetSparesReaders(t *testing.T) {
	b := newBufferBudget(8<<20, logr.Discard())
	g := &guardedConn{}
	in := tunnelBuffers{b, "cluster1"}
	_, stalledRaw := open(t, b, g, "cluster1", 2)
	reader, readerRaw := open(t, b, g, "cluster1", 3)
	in.received(g, 2, 2<<20)
	// The stalled client has taken nothing for a while.
	b.mu.Lock()
	b.conns[connKey{g, 2}].lastRead = time.Now().Add(-stallPeriod)
	b.mu.Unlock()
	// The reader's client takes its answer, and is 7 MiB behind.
	in.received(g, 3, 6<<20)
	readerRaw.data = make([]byte, 6<<20)
	_, err := io.Copy(io.Discard, reader)
	require.NoError(t, err)
	in.received(g, 3, 6<<20)
	assert.Zero(t, b.stats().ClosedOverBudget)
	in.received(g, 3, 1<<20)
	require.Eventually(t, func() bool { return stalledRaw.closed.Load() }, waitFor, tick)
	assert.False(t, readerRaw.closed.Load())
	assert.Equal(t, int64(7<<20), b.stats().Held)
}
