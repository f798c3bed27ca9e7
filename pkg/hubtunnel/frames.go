package hubtunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The tunnel is a WebSocket (RFC 6455) carrying remotedialer's messages: one
// binary WebSocket message is one tunnel message, which starts with three
// varints (message id, connection id, message type) and, for Data and
// Connect, a fourth (a deadline no longer used). FrameScanner reads that
// stream as it passes through the hub's end of the connection, without
// changing or holding it, so the hub can bound what an agent sends before
// the tunnel library reads it into memory.

// MessageType is a tunnel message's type, remotedialer's numbering.
type MessageType int64

// The tunnel message types.
const (
	MessageData MessageType = iota + 1
	MessageConnect
	MessageError
	MessageAddClient
	MessageRemoveClient
	MessagePause
	MessageResume
	MessageSyncConnections
)

// maxTunnelHeader is the longest tunnel message header: four varints of at
// most ten bytes each.
const maxTunnelHeader = 4 * binary.MaxVarintLen64

// MaxControlPayload is the longest payload RFC 6455 allows a control frame
// (close, ping, pong).
const MaxControlPayload = 125

// MessageHeader encodes a tunnel message's header as the tunnel library
// writes it: message id, connection id, type and, for Data and Connect, the
// deadline field it no longer reads.
func MessageHeader(id, connID int64, typ MessageType) []byte {
	b := binary.AppendVarint(nil, id)
	b = binary.AppendVarint(b, connID)
	b = binary.AppendVarint(b, int64(typ))
	if typ == MessageData || typ == MessageConnect {
		b = binary.AppendVarint(b, 15000)
	}
	return b
}

// Scanned is what FrameScanner reports about the stream.
type Scanned interface {
	// Message is called once per tunnel message, when its header has been
	// read: its connection id and type.
	Message(connID int64, typ MessageType)
	// Payload is called for each part of a tunnel message's body as it
	// passes: n bytes of the message whose header Message reported last.
	Payload(connID int64, typ MessageType, n int64)
}

// FrameScanner follows one direction of a tunnel's WebSocket connection.
// Feed it every byte in order with Scan; it returns an error, and keeps
// returning it, once the stream breaks the protocol or a limit.
type FrameScanner struct {
	// Masked is true for the direction from client to server, whose frames
	// RFC 6455 requires to be masked; the server's are not.
	Masked bool
	// MaxMessage bounds a message's payload, summed over its frames.
	MaxMessage int64
	// SkipHTTP is true for the server's direction, which starts with the
	// HTTP response to the upgrade before the first frame.
	SkipHTTP bool

	err      error
	httpDone bool
	httpTail []byte
	httpSeen int

	// The frame being read.
	head       []byte
	remaining  int64
	mask       [4]byte
	maskOffset int
	control    bool

	// The message being read.
	inMessage  bool
	messageLen int64
	prefix     []byte
	headerDone bool
	headerLen  int
	connID     int64
	typ        MessageType
}

// Err returns the error that stopped the scanner, if any.
func (s *FrameScanner) Err() error { return s.err }

// Scan reads p, the next bytes of the stream, and reports to out.
func (s *FrameScanner) Scan(p []byte, out Scanned) error {
	if s.err != nil {
		return s.err
	}
	if s.SkipHTTP && !s.httpDone {
		p = s.skipHTTP(p)
	}
	for len(p) > 0 && s.err == nil {
		if !s.frameHeaderComplete() {
			n := s.readHeader(p)
			p = p[n:]
			continue
		}
		n := int64(len(p))
		if n > s.remaining {
			n = s.remaining
		}
		if !s.control {
			s.payload(p[:n], out)
		}
		s.remaining -= n
		p = p[n:]
		if s.remaining == 0 {
			s.endFrame()
		}
	}
	return s.err
}

// skipHTTP passes over the HTTP response ahead of the first frame and
// returns what follows it.
func (s *FrameScanner) skipHTTP(p []byte) []byte {
	const end = "\r\n\r\n"
	s.httpSeen += len(p)
	joined := append(s.httpTail, p...)
	if i := bytes.Index(joined, []byte(end)); i >= 0 {
		s.httpDone = true
		s.httpTail = nil
		consumedBefore := len(joined) - len(p)
		return p[i+len(end)-consumedBefore:]
	}
	if s.httpSeen > 8<<10 {
		s.err = errors.New("the HTTP response to the upgrade is longer than 8 KiB")
		return nil
	}
	s.httpTail = joined
	if len(s.httpTail) > len(end) {
		s.httpTail = append([]byte(nil), s.httpTail[len(s.httpTail)-len(end):]...)
	}
	return nil
}

// frameHeaderLen returns the length of the frame header in s.head, or 0
// while it is not known yet.
func (s *FrameScanner) frameHeaderLen() int {
	if len(s.head) < 2 {
		return 0
	}
	n := 2
	switch s.head[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if s.head[1]&0x80 != 0 {
		n += 4
	}
	return n
}

func (s *FrameScanner) frameHeaderComplete() bool {
	n := s.frameHeaderLen()
	return n > 0 && len(s.head) == n
}

// readHeader adds bytes of p to the frame header and, once it is whole,
// starts the frame. It returns how many bytes of p it took.
func (s *FrameScanner) readHeader(p []byte) int {
	taken := 0
	for len(p) > taken {
		want := s.frameHeaderLen()
		if want == 0 {
			want = 2
		}
		if len(s.head) >= want {
			break
		}
		need := want - len(s.head)
		if need > len(p)-taken {
			need = len(p) - taken
		}
		s.head = append(s.head, p[taken:taken+need]...)
		taken += need
		if s.frameHeaderLen() == len(s.head) {
			s.startFrame()
			break
		}
	}
	return taken
}

// startFrame checks the whole frame header in s.head.
func (s *FrameScanner) startFrame() {
	b0, b1 := s.head[0], s.head[1]
	fin, opcode, masked := b0&0x80 != 0, b0&0x0f, b1&0x80 != 0
	if b0&0x70 != 0 {
		s.err = errors.New("a frame sets reserved bits no extension was agreed for")
		return
	}
	if masked != s.Masked {
		s.err = fmt.Errorf("a frame's mask bit is %t, the protocol requires %t in this direction", masked, s.Masked)
		return
	}
	var length int64
	rest := s.head[2:]
	switch b1 & 0x7f {
	case 126:
		length = int64(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
	case 127:
		u := binary.BigEndian.Uint64(rest)
		if u > 1<<62 {
			s.err = fmt.Errorf("a frame announces %d bytes", u)
			return
		}
		length = int64(u)
		rest = rest[8:]
	default:
		length = int64(b1 & 0x7f)
	}
	if masked {
		copy(s.mask[:], rest)
	}
	s.maskOffset = 0
	s.remaining = length
	s.control = opcode >= 8
	switch {
	case s.control:
		if !fin || length > MaxControlPayload {
			s.err = fmt.Errorf("a control frame of %d bytes (fin %t): at most %d in one frame", length, fin, MaxControlPayload)
			return
		}
	case opcode == 0:
		if !s.inMessage {
			s.err = errors.New("a continuation frame outside a message")
			return
		}
	case opcode == 1 || opcode == 2:
		if s.inMessage {
			s.err = errors.New("a new message before the last one ended")
			return
		}
		s.inMessage = true
		s.messageLen, s.prefix, s.headerDone, s.headerLen = 0, s.prefix[:0], false, 0
	default:
		s.err = fmt.Errorf("a frame with the reserved opcode %d", opcode)
		return
	}
	if !s.control {
		s.messageLen += length
		if s.MaxMessage > 0 && s.messageLen > s.MaxMessage {
			s.err = fmt.Errorf("a tunnel message of %d bytes or more: the tunnel allows at most %d", s.messageLen, s.MaxMessage)
			return
		}
	}
	if length == 0 {
		s.endFrame()
	}
}

// payload passes p, bytes of a data frame's payload.
func (s *FrameScanner) payload(p []byte, out Scanned) {
	if !s.headerDone {
		need := maxTunnelHeader - len(s.prefix)
		if need > len(p) {
			need = len(p)
		}
		start := len(s.prefix)
		s.prefix = append(s.prefix, p[:need]...)
		s.unmask(s.prefix[start:])
		if !s.parseHeader(out) {
			return
		}
		// The header's bytes are not payload; what the prefix took past
		// the header is.
		taken := len(s.prefix) - start
		body := int64(len(s.prefix) - s.headerLen)
		if body > 0 {
			out.Payload(s.connID, s.typ, body)
		}
		p = p[taken:]
		if len(p) > 0 {
			out.Payload(s.connID, s.typ, int64(len(p)))
		}
		s.advanceMask(len(p))
		return
	}
	out.Payload(s.connID, s.typ, int64(len(p)))
	s.advanceMask(len(p))
}

// unmask unmasks b in place, the next bytes of the frame's payload.
func (s *FrameScanner) unmask(b []byte) {
	if !s.Masked {
		return
	}
	for i := range b {
		b[i] ^= s.mask[s.maskOffset%4]
		s.maskOffset++
	}
}

func (s *FrameScanner) advanceMask(n int) { s.maskOffset = (s.maskOffset + n) % 4 }

// parseHeader reads the tunnel message header from s.prefix and reports
// it; false while more bytes are needed (or the message ended without one,
// which endFrame reports).
func (s *FrameScanner) parseHeader(out Scanned) bool {
	r := bytes.NewReader(s.prefix)
	fields := [4]int64{}
	count := 3
	for i := 0; i < count; i++ {
		v, err := binary.ReadVarint(r)
		if err != nil {
			if len(s.prefix) >= maxTunnelHeader {
				s.err = fmt.Errorf("a tunnel message header that is not %d varints", count)
			}
			return false
		}
		fields[i] = v
		if i == 2 && (MessageType(v) == MessageData || MessageType(v) == MessageConnect) {
			count = 4
		}
	}
	s.headerDone = true
	s.headerLen = len(s.prefix) - r.Len()
	s.connID, s.typ = fields[1], MessageType(fields[2])
	out.Message(s.connID, s.typ)
	return true
}

// endFrame ends the frame just read and, with its FIN bit, its message.
func (s *FrameScanner) endFrame() {
	fin := s.head[0]&0x80 != 0
	control := s.control
	s.head = s.head[:0]
	s.remaining = 0
	s.control = false
	if control || !fin {
		return
	}
	if !s.headerDone {
		s.err = errors.New("a tunnel message too short for its header")
		return
	}
	s.inMessage = false
}
