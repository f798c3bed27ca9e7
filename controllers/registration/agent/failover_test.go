package agent

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// hubServer is a TLS server answering /readyz with status, and its
// bootstrap kubeconfig.
func hubServer(t *testing.T, status int) *kubeconfig.Info {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return bootstrapOf(t, srv)
}

// bootstrapOf returns a bootstrap kubeconfig of srv.
func bootstrapOf(t *testing.T, srv *httptest.Server) *kubeconfig.Info {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	raw, err := kubeconfig.ForToken(srv.URL, ca, "bootstrap-token")
	if err != nil {
		t.Fatal(err)
	}
	info, err := kubeconfig.FromSecret(map[string][]byte{kubeconfig.KubeconfigKey: raw})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// downHub is the kubeconfig of a hub whose server is gone.
func downHub(t *testing.T) *kubeconfig.Info {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	info := bootstrapOf(t, srv)
	srv.Close()
	return info
}

func TestFirstAnswering(t *testing.T) {
	ctx := context.Background()
	down, up, unauthorized, failing := downHub(t), hubServer(t, http.StatusOK), hubServer(t, http.StatusUnauthorized), hubServer(t, http.StatusServiceUnavailable)
	tests := []struct {
		name  string
		cands []*kubeconfig.Info
		after int
		want  int
	}{
		{"from the first", []*kubeconfig.Info{up, up}, -1, 0},
		{"skips a hub that is down", []*kubeconfig.Info{down, up}, -1, 1},
		{"an expired token still shows a hub that is up", []*kubeconfig.Info{down, unauthorized}, -1, 1},
		{"skips a hub that fails", []*kubeconfig.Info{failing, down, up}, -1, 2},
		{"skips an unreadable Secret", []*kubeconfig.Info{nil, up}, -1, 1},
		{"starts after the current hub", []*kubeconfig.Info{up, up, up}, 0, 1},
		{"wraps around", []*kubeconfig.Info{up, down, up}, 2, 0},
		{"never returns the current hub", []*kubeconfig.Info{down, up}, 1, -1},
		{"none answers", []*kubeconfig.Info{down, failing}, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstAnswering(ctx, tt.cands, tt.after); got != tt.want {
				t.Errorf("firstAnswering(after %d) = %d, want %d", tt.after, got, tt.want)
			}
		})
	}
}

func TestHubAnswered(t *testing.T) {
	gr := schema.GroupResource{Resource: "managedclusters"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"success", nil, true},
		{"not found", apierrors.NewNotFound(gr, "c1"), true},
		{"forbidden", apierrors.NewForbidden(gr, "c1", errors.New("no")), true},
		{"unauthorized", apierrors.NewUnauthorized("expired"), true},
		{"server error", apierrors.NewInternalError(errors.New("etcd")), false},
		{"unavailable", apierrors.NewServiceUnavailable("starting"), false},
		{"connection refused", errors.New("dial tcp 10.0.0.1:6443: connect: connection refused"), false},
		{"bootstrap Secret missing", &bootstrapError{missing: true, err: errors.New("not found")}, false},
	}
	for _, tt := range tests {
		if got := hubAnswered(tt.err); got != tt.want {
			t.Errorf("%s: hubAnswered = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHubLost(t *testing.T) {
	now := testNow
	a := &Agent{now: func() time.Time { return now }}
	a.opts.BootstrapKubeconfigSecrets = []string{"primary"}
	a.opts.HubConnectionTimeout = 3 * time.Minute
	a.contact = now.Add(-time.Hour)
	if _, due := a.hubLost(); due {
		t.Fatal("an agent with one hub has nowhere to go, but hubLost says it should look")
	}
	a.opts.BootstrapKubeconfigSecrets = []string{"primary", "standby"}
	a.contact = now.Add(-2 * time.Minute)
	if lost, due := a.hubLost(); due || lost != 2*time.Minute {
		t.Fatalf("lost 2m of a 3m timeout: hubLost = %s, %v; want 2m0s, false", lost, due)
	}
	a.noteContact()
	now = now.Add(3 * time.Minute)
	if lost, due := a.hubLost(); !due || lost != 3*time.Minute {
		t.Fatalf("3m since the last contact: hubLost = %s, %v; want 3m0s, true", lost, due)
	}
	a.nextHubSearch = now.Add(failoverRetryInterval)
	if _, due := a.hubLost(); due {
		t.Fatal("a search that found no other hub waits for failoverRetryInterval")
	}
	now = now.Add(failoverRetryInterval)
	if _, due := a.hubLost(); !due {
		t.Fatal("after failoverRetryInterval the agent looks again")
	}
}
