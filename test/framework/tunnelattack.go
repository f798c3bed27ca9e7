package framework

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// A compromised managed cluster holds its agent's credential, and so one
// end of its hub tunnel. These helpers speak the tunnel's protocol as such
// an attacker would, for the tests that check what the hub bounds.

// AttachTunnelAs opens cluster's tunnel at the hub cfg names, as cfg's
// identity, and returns the raw WebSocket. The caller closes it.
func AttachTunnelAs(ctx context.Context, cfg *rest.Config, attachURL string) (*websocket.Conn, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	header := http.Header{}
	if cfg.BearerToken != "" {
		header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	conn, resp, err := (&websocket.Dialer{TLSClientConfig: tlsConfig}).DialContext(ctx, attachURL, header)
	if resp != nil && resp.Body != nil {
		defer func() { _ = resp.Body.Close() }()
		if err != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return nil, fmt.Errorf("attach %s: %s: %s", attachURL, resp.Status, body)
		}
	}
	return conn, err
}

// ReadTunnelMessageHeader reads a tunnel message's connection id and type.
func ReadTunnelMessageHeader(b []byte) (connID int64, typ hubtunnel.MessageType) {
	_, n := binary.Varint(b)
	if n <= 0 {
		return 0, 0
	}
	connID, m := binary.Varint(b[n:])
	if m <= 0 {
		return 0, 0
	}
	t, _ := binary.Varint(b[n+m:])
	return connID, hubtunnel.MessageType(t)
}

// SendHugeTunnelMessage sends one SyncConnections message of size bytes on
// conn, 64 KiB at a time, the message the tunnel library would read whole
// into memory, and returns how much it wrote before a write failed (the hub
// closed the tunnel) or all of it.
func SendHugeTunnelMessage(conn *websocket.Conn, size int64) (int64, error) {
	w, err := conn.NextWriter(websocket.BinaryMessage)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(hubtunnel.MessageHeader(1, 0, hubtunnel.MessageSyncConnections))
	sent := int64(n)
	buf := make([]byte, 64<<10)
	for err == nil && sent < size {
		n, err = w.Write(buf)
		sent += int64(n)
	}
	if err == nil {
		err = w.Close()
	}
	return sent, err
}
