package app

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// TestWaitForAPIServer checks the wait at start: an API server that is not
// ready is waited out (serving the health endpoint meanwhile, released
// after), one that answers 403 is not, and one that never gets ready ends
// the wait with a clear error after the bound.
func TestWaitForAPIServer(t *testing.T) {
	defer func(w, try time.Duration, b wait.Backoff) { apiServerWait, apiServerTry, apiServerBackoff = w, try, b }(apiServerWait, apiServerTry, apiServerBackoff)
	// Looks at the cap after the third: a wait goes on there.
	apiServerBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 4 * time.Millisecond}
	apiServerTry = time.Second

	notReady := "[+]ping ok\n[-]informer-sync failed: reason withheld\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nreadyz check failed\n"
	// apiServer answers each path with the status answer returns for its
	// nth request of that path (from 1), and counts them.
	type apiServer struct {
		*httptest.Server
		mu    sync.Mutex
		looks map[string]int
	}
	start := func(t *testing.T, answer func(path string, n int) (int, string)) *apiServer {
		a := &apiServer{looks: map[string]int{}}
		a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.mu.Lock()
			a.looks[r.URL.Path]++
			n := a.looks[r.URL.Path]
			a.mu.Unlock()
			code, body := answer(r.URL.Path, n)
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(a.Close)
		return a
	}
	look := func(a *apiServer, path string) int {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.looks[path]
	}
	served := func(path string) (int, string) {
		if path == "/readyz" {
			return http.StatusOK, "ok"
		}
		return http.StatusOK, "{}"
	}

	t.Run("ready after ten failed looks", func(t *testing.T) {
		apiServerWait = time.Minute
		healthAddr := freeAddr(t)
		var healthz, readyzWhileWaiting atomic.Int32
		a := start(t, func(path string, n int) (int, string) {
			if path == "/readyz" && n <= 10 {
				// The component serves its health endpoint while it waits.
				healthz.Store(int32(get(t, "http://"+healthAddr+"/healthz")))
				readyzWhileWaiting.Store(int32(get(t, "http://"+healthAddr+"/readyz")))
				return http.StatusInternalServerError, notReady
			}
			return served(path)
		})
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, healthAddr, logr.Discard()))
		assert.Equal(t, 11, look(a, "/readyz"))
		assert.Equal(t, 1, look(a, "/apis"), "discovery, once ready")
		assert.EqualValues(t, http.StatusOK, healthz.Load(), "/healthz while waiting")
		assert.EqualValues(t, http.StatusServiceUnavailable, readyzWhileWaiting.Load(), "/readyz while waiting")
		// The manager binds the address next: it is free again.
		l, err := net.Listen("tcp", healthAddr)
		require.NoError(t, err, "the health address after the wait")
		_ = l.Close()
	})

	t.Run("ready at once serves no health endpoint", func(t *testing.T) {
		apiServerWait = time.Minute
		healthAddr := freeAddr(t)
		a := start(t, func(path string, _ int) (int, string) { return served(path) })
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, healthAddr, logr.Discard()))
		assert.Equal(t, 1, look(a, "/readyz"))
		l, err := net.Listen("tcp", healthAddr)
		require.NoError(t, err)
		_ = l.Close()
	})

	t.Run("discovery not served yet after /readyz", func(t *testing.T) {
		// A restarting API server may pass /readyz while its discovery
		// answers 503, or refuse a token its caches cannot check yet.
		apiServerWait = time.Minute
		a := start(t, func(path string, n int) (int, string) {
			switch {
			case path == "/api" && n <= 2:
				return http.StatusServiceUnavailable, ""
			case path == "/apis" && n <= 2:
				return http.StatusUnauthorized, `{"kind":"Status","message":"Unauthorized"}`
			}
			return served(path)
		})
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, "", logr.Discard()))
		assert.Equal(t, 5, look(a, "/readyz"), "looks: /api twice 503, /apis twice 401, then ready")
		assert.Equal(t, 3, look(a, "/apis"))
	})

	t.Run("/readyz forbidden, discovery served", func(t *testing.T) {
		apiServerWait = time.Minute
		a := start(t, func(path string, _ int) (int, string) {
			if path == "/readyz" {
				return http.StatusForbidden, "forbidden"
			}
			return served(path)
		})
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, "0", logr.Discard()))
		assert.Equal(t, 1, look(a, "/readyz"))
	})

	t.Run("never ready", func(t *testing.T) {
		apiServerWait = 300 * time.Millisecond
		a := start(t, func(string, int) (int, string) { return http.StatusInternalServerError, notReady })
		err := waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, "", logr.Discard())
		require.ErrorContains(t, err, "the API server at "+a.URL+" was not ready within 300ms")
		assert.ErrorContains(t, err, "failed checks informer-sync, poststarthook/rbac/bootstrap-roles")
		assert.Greater(t, look(a, "/readyz"), 2)
	})

	t.Run("discovery never served", func(t *testing.T) {
		apiServerWait = 300 * time.Millisecond
		a := start(t, func(path string, _ int) (int, string) {
			if path == "/apis" {
				return http.StatusForbidden, `{"kind":"Status","message":"forbidden: User \"x\" cannot get path \"/apis\""}`
			}
			return served(path)
		})
		err := waitForAPIServer(context.Background(), &rest.Config{Host: a.URL}, "", logr.Discard())
		require.ErrorContains(t, err, "was not ready within 300ms: /apis answered 403")
		assert.ErrorContains(t, err, `cannot get path \"/apis\"`)
	})

	t.Run("not answering", func(t *testing.T) {
		apiServerWait = 300 * time.Millisecond
		addr := freeAddr(t) // nothing listens there
		err := waitForAPIServer(context.Background(), &rest.Config{Host: "http://" + addr}, "", logr.Discard())
		require.ErrorContains(t, err, "connection refused")
	})

	t.Run("context ended", func(t *testing.T) {
		apiServerWait = time.Minute
		a := start(t, func(string, int) (int, string) { return http.StatusServiceUnavailable, notReady })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := waitForAPIServer(ctx, &rest.Config{Host: a.URL}, "", logr.Discard())
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "was not ready within")
	})
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// get returns the status of a GET of url, 0 when it fails.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
