package hub

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// stallWriter is a proxied request's ResponseWriter that gives each write
// to the client, and each flush, a deadline of timeout: a client that
// takes nothing of the answer for that long loses its connection, and the
// tunnel's connection with its buffer is freed. Between writes there is no
// deadline, so a watch may stay quiet as long as it likes. An upgraded
// connection (exec, attach, port-forward) gets the same deadline on each
// write. abort ends the answer at once.
type stallWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration

	mu       sync.Mutex
	hijacked net.Conn
	aborted  bool
	done     bool
	stalled  bool
}

func newStallWriter(w http.ResponseWriter, timeout time.Duration) *stallWriter {
	return &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

var errAborted = errors.New("the hub closed the proxied connection")

// setDeadline sets the write deadline of the answer or the upgraded
// connection; w.mu is held.
func (w *stallWriter) setDeadline(t time.Time) {
	if w.hijacked != nil {
		_ = w.hijacked.SetWriteDeadline(t)
		return
	}
	_ = w.rc.SetWriteDeadline(t)
}

// arm gives the next write its deadline, or says the answer was aborted.
func (w *stallWriter) arm() (time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.aborted || w.done {
		return time.Time{}, errAborted
	}
	deadline := time.Now().Add(w.timeout)
	w.setDeadline(deadline)
	return deadline, nil
}

// disarm clears the deadline after a write and notes a stall.
func (w *stallWriter) disarm(deadline time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !w.aborted && !time.Now().Before(deadline) {
			w.stalled = true
		}
		return
	}
	if !w.aborted && !w.done {
		w.setDeadline(time.Time{})
	}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	deadline, err := w.arm()
	if err != nil {
		return 0, err
	}
	n, err := w.ResponseWriter.Write(p)
	w.disarm(deadline, err)
	return n, err
}

// FlushError flushes within the deadline; ReverseProxy flushes after every
// write.
func (w *stallWriter) FlushError() error {
	deadline, err := w.arm()
	if err != nil {
		return err
	}
	err = http.NewResponseController(w.ResponseWriter).Flush()
	w.disarm(deadline, err)
	return err
}

// Hijack takes the client's connection over for an upgrade and puts its
// writes under the deadline.
func (w *stallWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	c := &stallConn{Conn: conn, w: w}
	w.mu.Lock()
	w.hijacked = conn
	w.mu.Unlock()
	if rw.Writer.Buffered() == 0 {
		rw = bufio.NewReadWriter(rw.Reader, bufio.NewWriter(c))
	}
	return c, rw, nil
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// abort ends the answer: a write in progress fails now, later ones at once.
func (w *stallWriter) abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.aborted || w.done {
		return
	}
	w.aborted = true
	w.setDeadline(time.Now())
}

// finish notes that the handler returned, after which the writer and its
// connection are the server's again, and says whether the client stalled.
func (w *stallWriter) finish() (stalled bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	return w.stalled
}

// stallConn is an upgraded connection whose writes have the deadline.
type stallConn struct {
	net.Conn
	w *stallWriter
}

func (c *stallConn) Write(p []byte) (int, error) {
	deadline, err := c.w.arm()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	c.w.disarm(deadline, err)
	return n, err
}
