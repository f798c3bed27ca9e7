package hub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// pipeConn is an agent's end as the guard sees it: Read returns what the
// agent sent, Write takes the hub's stream.
type pipeConn struct {
	net.Conn
	in     *bytes.Buffer
	closed bool
}

func (c *pipeConn) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *pipeConn) Close() error                { c.closed = true; return nil }

// frame encodes one final binary WebSocket frame of payload, masked as a
// client's.
func frame(payload []byte, masked bool) []byte {
	b := []byte{0x82, 0}
	switch n := len(payload); {
	case n < 126:
		b[1] = byte(n)
	case n < 1<<16:
		b[1] = 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if !masked {
		return append(b, payload...)
	}
	// A zero mask leaves the payload as it is.
	b[1] |= 0x80
	return append(append(b, 0, 0, 0, 0), payload...)
}

// TestGuardPausedPerConnection checks that many connections paused at once,
// each with what was in flight, keep the tunnel, and one connection
// flooded after its Pause closes it.
func TestGuardPausedPerConnection(t *testing.T) {
	agent := &pipeConn{in: &bytes.Buffer{}}
	var broke error
	g, rw := guard(agent, bufio.NewReadWriter(bufio.NewReader(agent), bufio.NewWriter(agent)), func(err error) { broke = err }, nil)
	// The hub pauses 40 connections.
	out := []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
	for id := int64(2); id < 42; id++ {
		out = append(out, frame(hubtunnel.MessageHeader(id, id, hubtunnel.MessagePause), false)...)
	}
	_, err := g.Write(out)
	require.NoError(t, err)
	data := func(id int64, n int) {
		chunk := make([]byte, 8<<10)
		for sent := 0; sent < n; sent += len(chunk) {
			agent.in.Write(frame(append(hubtunnel.MessageHeader(1, id, hubtunnel.MessageData), chunk...), true))
		}
	}
	// 1 MiB in flight on each: 40 MiB over the tunnel.
	for id := int64(2); id < 42; id++ {
		data(id, 1<<20)
	}
	_, err = io.Copy(io.Discard, rw.Reader)
	require.NoError(t, err)
	assert.NoError(t, broke)
	assert.False(t, agent.closed)
	// One connection flooded past the budget after its Pause.
	data(2, PausedBudget)
	_, err = io.Copy(io.Discard, rw.Reader)
	require.Error(t, err)
	require.Error(t, broke)
	assert.ErrorContains(t, broke, "it ignores the hub's Pause")
	assert.True(t, agent.closed)
}
