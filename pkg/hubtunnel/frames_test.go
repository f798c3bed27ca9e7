package hubtunnel

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events records what a FrameScanner reports.
type events struct {
	messages []string
	payload  map[int64]int64
}

func (e *events) Message(connID int64, typ MessageType) {
	e.messages = append(e.messages, fmt.Sprintf("%d/%d", connID, typ))
}

func (e *events) Payload(connID int64, typ MessageType, n int64) {
	if e.payload == nil {
		e.payload = map[int64]int64{}
	}
	e.payload[connID] += n
}

// tunnelMessage encodes a tunnel message as remotedialer does.
func tunnelMessage(id, connID int64, typ MessageType, body []byte) []byte {
	return append(MessageHeader(id, connID, typ), body...)
}

// frame encodes one WebSocket frame, masked with a fixed key when masked.
func frame(fin bool, opcode byte, payload []byte, masked bool) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	var maskBit byte
	if masked {
		maskBit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		out = append(out, maskBit|byte(n))
	case n <= 0xffff:
		out = append(out, maskBit|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, maskBit|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if !masked {
		return append(out, payload...)
	}
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	out = append(out, key[:]...)
	for i, c := range payload {
		out = append(out, c^key[i%4])
	}
	return out
}

// scanInChunks feeds stream to a new scanner chunk bytes at a time.
func scanInChunks(s FrameScanner, stream []byte, chunk int) (*events, error) {
	e := &events{}
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		if err := s.Scan(stream[:n], e); err != nil {
			return e, err
		}
		stream = stream[n:]
	}
	return e, nil
}

func TestFrameScanner(t *testing.T) {
	body := []byte(strings.Repeat("pod log line\n", 1000))
	data := tunnelMessage(1, 7, MessageData, body)
	pause := tunnelMessage(2, 9, MessagePause, nil)
	const limit = 64 << 10
	tests := []struct {
		name     string
		scanner  FrameScanner
		stream   []byte
		messages []string
		payload  map[int64]int64
		err      string
	}{{
		name:     "a data message in one frame and a pause",
		scanner:  FrameScanner{Masked: true, MaxMessage: limit},
		stream:   append(frame(true, 2, data, true), frame(true, 2, pause, true)...),
		messages: []string{"7/1", "9/6"},
		payload:  map[int64]int64{7: int64(len(body))},
	}, {
		name:    "a data message in three frames with a ping between them",
		scanner: FrameScanner{Masked: true, MaxMessage: limit},
		stream: concat(frame(false, 2, data[:2], true), frame(true, 9, []byte("hi"), true),
			frame(false, 0, data[2:100], true), frame(true, 0, data[100:], true)),
		messages: []string{"7/1"},
		payload:  map[int64]int64{7: int64(len(body))},
	}, {
		name:     "the server's direction after its HTTP response",
		scanner:  FrameScanner{SkipHTTP: true},
		stream:   append([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"), frame(true, 2, pause, false)...),
		messages: []string{"9/6"},
	}, {
		name:    "a frame that announces 64 MiB",
		scanner: FrameScanner{Masked: true, MaxMessage: limit},
		stream:  frame(true, 2, make([]byte, 64<<20), true)[:14],
		err:     "a tunnel message of 67108864 bytes or more: the tunnel allows at most 65536",
	}, {
		name:    "a message whose frames add up past the limit",
		scanner: FrameScanner{Masked: true, MaxMessage: limit},
		stream: concat(frame(false, 2, tunnelMessage(1, 7, MessageSyncConnections, make([]byte, 40<<10)), true),
			frame(true, 0, make([]byte, 40<<10), true)),
		messages: []string{"7/8"},
		err:      "a tunnel message of 81923 bytes or more",
	}, {
		name:    "an unmasked frame from a client",
		scanner: FrameScanner{Masked: true},
		stream:  frame(true, 2, pause, false),
		err:     "mask bit is false",
	}, {
		name:    "a ping of 200 bytes",
		scanner: FrameScanner{Masked: true},
		stream:  frame(true, 9, make([]byte, 200), true),
		err:     "a control frame of 200 bytes",
	}, {
		name:    "a continuation frame outside a message",
		scanner: FrameScanner{Masked: true},
		stream:  frame(true, 0, pause, true),
		err:     "a continuation frame outside a message",
	}, {
		name:    "a message too short for its header",
		scanner: FrameScanner{Masked: true},
		stream:  frame(true, 2, []byte{2}, true),
		err:     "too short for its header",
	}, {
		name:    "reserved bits",
		scanner: FrameScanner{Masked: true},
		stream:  append([]byte{0xc2}, frame(true, 2, pause, true)[1:]...),
		err:     "reserved bits",
	}, {
		name:    "an HTTP response that never ends",
		scanner: FrameScanner{SkipHTTP: true},
		stream:  []byte(strings.Repeat("X-Header: value\r\n", 1000)),
		err:     "longer than 8 KiB",
	}}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 1000, len(tt.stream)} {
			t.Run(fmt.Sprintf("%s/chunks of %d", tt.name, chunk), func(t *testing.T) {
				e, err := scanInChunks(tt.scanner, tt.stream, chunk)
				if tt.err != "" {
					require.ErrorContains(t, err, tt.err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tt.messages, e.messages)
				if tt.payload != nil {
					assert.Equal(t, tt.payload, e.payload)
				}
			})
		}
	}
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
