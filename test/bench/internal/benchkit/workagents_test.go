package benchkit

import (
	"bufio"
	"net"
	"testing"
	"time"
)

func TestHostPort(t *testing.T) {
	tests := []struct {
		server, want string
		err          bool
	}{
		{server: "https://127.0.0.1:6443", want: "127.0.0.1:6443"},
		{server: "https://127.0.0.1:6443/", want: "127.0.0.1:6443"},
		{server: "https://127.0.0.1", err: true},
		{server: "://bad", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			got, err := hostPort(tt.server)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("hostPort(%q) = %q, %v; want %q, error %t", tt.server, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestForwarder sends lines through a forwarder to an echo server, then
// closes the forwarder with a connection still open: the connection ends
// and close returns.
func TestForwarder(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()

	fw, err := startForwarder(echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if fw.addr() == echo.Addr().String() {
		t.Fatalf("the forwarder listens at its target's address %s", fw.addr())
	}
	c, err := net.Dial("tcp", fw.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, msg := range []string{"hello\n", "again\n"} {
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo through the forwarder = %q, %v; want %q", got, err, msg)
		}
	}

	closed := make(chan struct{})
	go func() { fw.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return with a connection open")
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the client's connection is still open after close")
	}
	if _, err := net.DialTimeout("tcp", fw.addr(), time.Second); err == nil {
		t.Error("the forwarder still accepts after close")
	}
}
