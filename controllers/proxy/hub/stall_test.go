package hub

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handlerResult is how a handler writing through a stallWriter ended.
type handlerResult struct {
	written int64
	err     error
	stalled bool
}

// stallServer serves a handler that writes up to 256 MiB through a
// stallWriter of timeout, over HTTP/1.1 or HTTP/2, and reports how it
// ended; writers receives each request's writer.
func stallServer(t *testing.T, h2 bool, timeout time.Duration, quiet time.Duration) (*httptest.Server, <-chan handlerResult, <-chan *stallWriter) {
	results := make(chan handlerResult, 1)
	writers := make(chan *stallWriter, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := newStallWriter(w, timeout)
		writers <- sw
		var res handlerResult
		defer func() { res.stalled = sw.finish(); results <- res }()
		chunk := make([]byte, 64<<10)
		if quiet > 0 {
			// A stream with nothing to send for longer than the
			// timeout, then a little.
			_, res.err = sw.Write(chunk[:10])
			if res.err == nil {
				res.err = sw.FlushError()
			}
			time.Sleep(quiet)
			n, err := sw.Write(chunk[:10])
			res.written = int64(10 + n)
			if res.err == nil {
				res.err = err
			}
			return
		}
		for res.written < 256<<20 {
			n, err := sw.Write(chunk)
			res.written += int64(n)
			if err == nil {
				err = sw.FlushError()
			}
			if err != nil {
				res.err = err
				return
			}
		}
	}))
	srv.EnableHTTP2 = h2
	if h2 {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, results, writers
}

func get(t *testing.T, srv *httptest.Server) *http.Response {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestStallWriter(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
		t.Run(proto+": a client that stops reading loses the answer", func(t *testing.T) {
			srv, results, _ := stallServer(t, h2, 300*time.Millisecond, 0)
			resp := get(t, srv)
			assert.Equal(t, proto[:6], resp.Proto[:6])
			select {
			case res := <-results:
				require.Error(t, res.err, "the handler wrote %d bytes to a client reading none", res.written)
				assert.True(t, res.stalled)
				assert.Less(t, res.written, int64(256<<20))
			case <-time.After(time.Minute):
				t.Fatal("the handler still writes to a client that reads nothing")
			}
		})
		t.Run(proto+": a quiet stream outlives the timeout", func(t *testing.T) {
			srv, results, _ := stallServer(t, h2, 100*time.Millisecond, 500*time.Millisecond)
			resp := get(t, srv)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Len(t, body, 20)
			res := <-results
			require.NoError(t, res.err)
			assert.False(t, res.stalled)
		})
		t.Run(proto+": abort ends the answer", func(t *testing.T) {
			srv, results, writers := stallServer(t, h2, time.Hour, 0)
			get(t, srv)
			sw := <-writers
			sw.abort()
			select {
			case res := <-results:
				require.Error(t, res.err)
				assert.False(t, res.stalled, "an abort is no stall")
			case <-time.After(time.Minute):
				t.Fatal("the aborted answer is still being written")
			}
		})
	}
}
