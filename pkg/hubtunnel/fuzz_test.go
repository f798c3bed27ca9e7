package hubtunnel

import (
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// FuzzStripCredentials feeds StripCredentials a request header of two
// arbitrary fields, as a hub user's client may send it through the tunnel,
// and requires that nothing carrying or claiming an identity is left for
// the managed cluster: no credential header and no bearer-token
// subprotocol, in any spelling; that every other header is left as it was;
// and that the other subprotocols are kept.
func FuzzStripCredentials(f *testing.F) {
	f.Add("Authorization", "Bearer x", "Accept", "application/json")
	f.Add("Sec-WebSocket-Protocol", "v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.eA", "cookie", "a=b")
	f.Add("impersonate-user", "admin", "X-Remote-Group", "system:masters")
	f.Add("sec-websocket-protocol", " BASE64URL.BEARER.AUTHORIZATION.K8S.IO.eA ,, x", UserHeader, "alice")
	f.Fuzz(func(t *testing.T, name1, value1, name2, value2 string) {
		h := http.Header{}
		h[name1] = append(h[name1], value1)
		h[name2] = append(h[name2], value2)
		before := http.Header{}
		for k, v := range h {
			before[k] = append([]string(nil), v...)
		}
		StripCredentials(h)
		for name, values := range h {
			c := textproto.CanonicalMIMEHeaderKey(name)
			switch {
			case c == "Authorization", c == "Proxy-Authorization", c == "Cookie",
				c == textproto.CanonicalMIMEHeaderKey(UserHeader), c == textproto.CanonicalMIMEHeaderKey(GroupHeader),
				strings.HasPrefix(c, "Impersonate-"), strings.HasPrefix(c, "X-Remote-"):
				t.Fatalf("credential header %q kept: %q", name, values)
			case c == "Sec-Websocket-Protocol":
				if len(values) == 0 {
					t.Fatalf("an empty %q kept", name)
				}
				for _, v := range values {
					for _, p := range strings.Split(v, ",") {
						if strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), bearerProtocolPrefix) {
							t.Fatalf("bearer subprotocol kept in %q", v)
						}
					}
				}
			default:
				if strings.Join(values, "\x00") != strings.Join(before[name], "\x00") {
					t.Fatalf("header %q changed: %q → %q", name, before[name], values)
				}
			}
		}
		// Other subprotocols reach the cluster.
		for name, values := range before {
			if textproto.CanonicalMIMEHeaderKey(name) != "Sec-Websocket-Protocol" {
				continue
			}
			for _, v := range values {
				for _, p := range strings.Split(v, ",") {
					if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(strings.ToLower(p), bearerProtocolPrefix) &&
						!strings.Contains(strings.Join(h[name], ","), p) {
						t.Fatalf("subprotocol %q of %q dropped: %q", p, v, h[name])
					}
				}
			}
		}
	})
}

// FuzzFrameScanner feeds a FrameScanner arbitrary bytes, as an agent may
// send them down its tunnel, in two pieces split anywhere, and requires
// that it never panics, that where the stream is split changes nothing it
// reports, that it never reports more payload than the stream holds, and
// that no message it lets pass is longer than its limit.
func FuzzFrameScanner(f *testing.F) {
	f.Add(frame(true, 2, tunnelMessage(1, 7, MessageData, []byte("data")), true), 3, true)
	f.Add(concat(frame(false, 2, tunnelMessage(1, 7, MessageSyncConnections, []byte{2, 4}), true), frame(true, 9, nil, true),
		frame(true, 0, []byte{6}, true)), 5, true)
	f.Add(append([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"), frame(true, 2, tunnelMessage(3, 9, MessagePause, nil), false)...), 20, false)
	f.Add(frame(true, 2, make([]byte, 70000), true)[:20], 1, true)
	f.Fuzz(func(t *testing.T, stream []byte, split int, masked bool) {
		const limit = 4096
		newScanner := func() FrameScanner { return FrameScanner{Masked: masked, SkipHTTP: !masked, MaxMessage: limit} }
		whole := &events{}
		s := newScanner()
		errWhole := s.Scan(stream, whole)
		if split < 0 {
			split = -(split + 1)
		}
		split %= len(stream) + 1
		parts := &events{}
		s = newScanner()
		errParts := s.Scan(stream[:split], parts)
		if errParts == nil {
			errParts = s.Scan(stream[split:], parts)
		}
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("scanned whole: %v; scanned in two at %d: %v", errWhole, split, errParts)
		}
		if errWhole == nil && fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Fatalf("scanned whole: %v; scanned in two at %d: %v", whole, split, parts)
		}
		var total int64
		for _, n := range whole.payload {
			total += n
		}
		if total > int64(len(stream)) {
			t.Fatalf("reported %d bytes of payload in a stream of %d", total, len(stream))
		}
		if errWhole == nil && total > int64(limit*(len(whole.messages)+1)) {
			t.Fatalf("let %d bytes of payload pass in %d messages of at most %d", total, len(whole.messages), limit)
		}
	})
}
