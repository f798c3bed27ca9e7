package app

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
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

	t.Run("ready after ten failed looks", func(t *testing.T) {
		apiServerWait = time.Minute
		healthAddr := freeAddr(t)
		var looks atomic.Int32
		var healthz, readyzWhileWaiting atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "/readyz", r.URL.Path)
			if looks.Add(1) <= 10 {
				// The component serves its health endpoint while it waits.
				healthz.Store(int32(get(t, "http://"+healthAddr+"/healthz")))
				readyzWhileWaiting.Store(int32(get(t, "http://"+healthAddr+"/readyz")))
				http.Error(w, notReady, http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte("ok"))
		}))
		defer srv.Close()
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: srv.URL}, healthAddr, logr.Discard()))
		assert.EqualValues(t, 11, looks.Load())
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
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
		defer srv.Close()
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: srv.URL}, healthAddr, logr.Discard()))
		l, err := net.Listen("tcp", healthAddr)
		require.NoError(t, err)
		_ = l.Close()
	})

	t.Run("forbidden goes on", func(t *testing.T) {
		apiServerWait = time.Minute
		var looks atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			looks.Add(1)
			http.Error(w, "forbidden", http.StatusForbidden)
		}))
		defer srv.Close()
		require.NoError(t, waitForAPIServer(context.Background(), &rest.Config{Host: srv.URL}, "0", logr.Discard()))
		assert.EqualValues(t, 1, looks.Load())
	})

	t.Run("never ready", func(t *testing.T) {
		apiServerWait = 300 * time.Millisecond
		var looks atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			looks.Add(1)
			http.Error(w, notReady, http.StatusInternalServerError)
		}))
		defer srv.Close()
		err := waitForAPIServer(context.Background(), &rest.Config{Host: srv.URL}, "", logr.Discard())
		require.Error(t, err)
		assert.ErrorContains(t, err, "the API server at "+srv.URL+" was not ready within 300ms")
		assert.ErrorContains(t, err, "failed checks informer-sync, poststarthook/rbac/bootstrap-roles")
		assert.Greater(t, looks.Load(), int32(2))
	})

	t.Run("not answering", func(t *testing.T) {
		apiServerWait = 300 * time.Millisecond
		addr := freeAddr(t) // nothing listens there
		err := waitForAPIServer(context.Background(), &rest.Config{Host: "http://" + addr}, "", logr.Discard())
		require.Error(t, err)
		assert.ErrorContains(t, err, "connection refused")
	})

	t.Run("context ended", func(t *testing.T) {
		apiServerWait = time.Minute
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, notReady, http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := waitForAPIServer(ctx, &rest.Config{Host: srv.URL}, "", logr.Discard())
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
