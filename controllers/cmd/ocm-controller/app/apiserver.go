package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// apiServerWait bounds how long a component waits at start for its API
// server to be ready; apiServerBackoff spaces the looks, and
// apiServerTry bounds each one.
var (
	apiServerWait    = 5 * time.Minute
	apiServerBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 8 * time.Second}
	apiServerTry     = 10 * time.Second
)

// Connect returns the client configuration (RESTConfig) once its API server
// is ready. Every mode reads its API server while it starts (the TLS
// profile, the discovery behind the manager's cache), and a start-up read
// that fails ends the process; a component restarted while its API server
// restarts too (its leader lease lost in the outage) would exit again on a
// read the API server cannot serve yet, and be restarted for no reason of
// its own. So it first waits, logging each look, until /readyz (public to
// every identity; it includes the authorizer's caches) and the discovery
// roots answer (waitForAPIServer), for at most apiServerWait, and serves
// its health endpoint meanwhile so that its liveness probe does not
// restart it for waiting.
func (o *ManagerOptions) Connect(ctx context.Context) (*rest.Config, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	if err := waitForAPIServer(ctx, cfg, o.HealthProbeBindAddress, ctrl.Log.WithName("apiserver")); err != nil {
		return nil, err
	}
	return cfg, nil
}

// waitForAPIServer waits until cfg's API server is ready: /readyz answers
// 200 (or refuses this identity the path, 401 or 403, as a hardened API
// server may), and the discovery the manager starts with (/api, /apis)
// answers 200. Anything else is waited out: an API server that restarts
// listens before it serves, and may answer 401, 403 or 503 until its caches
// sync. healthAddr, unless empty or "0", serves /healthz (ok) and /readyz
// (not ready) from the first failed look until the wait ends.
func waitForAPIServer(ctx context.Context, cfg *rest.Config, healthAddr string, log logr.Logger) error {
	// A few requests a look: no client-side limit, which would end a look
	// cut short by the wait's end with its own error.
	lookCfg := rest.CopyConfig(cfg)
	lookCfg.QPS, lookCfg.Burst, lookCfg.RateLimiter = -1, 0, nil
	c, err := kubernetes.NewForConfig(lookCfg)
	if err != nil {
		return fmt.Errorf("client for the API server's readiness: %w", err)
	}
	var (
		last   string
		looks  int
		health *http.Server
	)
	defer func() {
		if health != nil {
			_ = health.Close()
		}
	}()
	waitCtx, cancel := context.WithTimeout(ctx, apiServerWait)
	defer cancel()
	// DelayFunc keeps looking at the cap once it reaches it (the Backoff's
	// own Step would end the wait there).
	err = apiServerBackoff.DelayFunc().Until(waitCtx, true, true, func(ctx context.Context) (bool, error) {
		looks++
		ready, why := readyz(ctx, c.Discovery().RESTClient())
		if ctx.Err() != nil {
			// The look was cut short by the wait's end: the one before
			// says why.
			return false, nil
		}
		if ready {
			if looks > 1 {
				log.Info("The API server is ready", "host", cfg.Host, "looks", looks)
			}
			return true, nil
		}
		last = why
		log.Info("Waiting for the API server to be ready", "host", cfg.Host, "reason", why)
		if health == nil {
			srv, err := serveWaiting(healthAddr)
			if err != nil {
				return false, err
			}
			health = srv
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && wait.Interrupted(err):
		return fmt.Errorf("the API server at %s was not ready within %s: %s", cfg.Host, apiServerWait, last)
	default:
		return err
	}
}

// readyz looks once at /readyz and at the discovery roots, and says whether
// the API server is ready, and if not why.
func readyz(ctx context.Context, rc rest.Interface) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, apiServerTry)
	defer cancel()
	var code int
	body, err := rc.Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Raw()
	switch {
	case code == http.StatusOK, code == http.StatusUnauthorized, code == http.StatusForbidden:
		// Ready, or not a path this identity may read: the discovery
		// below says whether it serves.
	case code == 0 && err != nil:
		return false, err.Error()
	default:
		return false, fmt.Sprintf("/readyz answered %d: %s", code, failedChecks(body))
	}
	for _, path := range []string{"/api", "/apis"} {
		body, err := rc.Get().AbsPath(path).Do(ctx).StatusCode(&code).Raw()
		switch {
		case code == http.StatusOK:
		case code == 0 && err != nil:
			return false, err.Error()
		default:
			first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
			return false, fmt.Sprintf("%s answered %d: %s", path, code, first)
		}
	}
	return true, ""
}

// failedChecks returns the checks /readyz's verbose body marks failed
// ("[-]name failed: ..."), or the body's first line.
func failedChecks(body []byte) string {
	var failed []string
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "[-]"); ok {
			failed = append(failed, strings.Fields(name)[0])
		}
	}
	if len(failed) > 0 {
		return "failed checks " + strings.Join(failed, ", ")
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	return first
}

// serveWaiting serves the health endpoint on addr while the component
// waits: /healthz ok, /readyz not ready. Close it before the manager binds
// addr. An empty addr or "0" (no health endpoint) serves nothing.
func serveWaiting(addr string) (*http.Server, error) {
	if addr == "" || addr == "0" {
		return nil, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve the health endpoint on %s while waiting for the API server: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "waiting for the API server", http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = l.Close()
		}
	}()
	return srv, nil
}
