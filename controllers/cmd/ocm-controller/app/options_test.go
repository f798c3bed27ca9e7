package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// TestLeaderElectionFlags checks the leader election timings: the defaults
// are controller-runtime's unless the mode sets the hub's, short settings are accepted, and combinations
// the leader elector would refuse are flag errors naming the flag.
func TestLeaderElectionFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		defaults leaderelect.Timings
		args     []string
		want     [3]time.Duration
		wantErr  string
	}{
		{name: "defaults", want: [3]time.Duration{15 * time.Second, 10 * time.Second, 2 * time.Second}},
		{name: "the hub's defaults", defaults: leaderelect.Hub, want: [3]time.Duration{60 * time.Second, 40 * time.Second, 2 * time.Second}},
		{name: "the hub's defaults, a short lease", defaults: leaderelect.Hub, args: []string{"--leader-elect-lease-duration=30s"}, wantErr: "--leader-elect-lease-duration 30s must be longer than --leader-elect-renew-deadline 40s"},
		{name: "short", args: []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"},
			want: [3]time.Duration{4 * time.Second, 3 * time.Second, 500 * time.Millisecond}},
		{name: "lease not longer than renew", args: []string{"--leader-elect-lease-duration=10s"}, wantErr: "--leader-elect-lease-duration"},
		{name: "renew too close to retry", args: []string{"--leader-elect-retry-period=9s"}, wantErr: "--leader-elect-renew-deadline"},
		{name: "retry not positive", args: []string{"--leader-elect-retry-period=-1s"}, wantErr: "--leader-elect-retry-period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &ManagerOptions{LeaderElectionDefaults: tc.defaults}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, true)
			if err := fs.Parse(append(tc.args, "--namespace=ns")); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			lt := o.leaderElectionTimings()
			if got := [3]time.Duration{lt.LeaseDuration, lt.RenewDeadline, lt.RetryPeriod}; got != tc.want {
				t.Fatalf("timings %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProfilingFlag checks that --profiling serves Go's profiles, a heap
// profile and the CPU profile's endpoint among them, and that without it
// the metrics address serves none.
func TestProfilingFlag(t *testing.T) {
	parse := func(args ...string) *ManagerOptions {
		o := &ManagerOptions{}
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs, true)
		require.NoError(t, fs.Parse(args))
		return o
	}
	require.Nil(t, parse().profilingHandlers(), "profiles served without --profiling")

	mux := http.NewServeMux()
	for path, h := range parse("--profiling").profilingHandlers() {
		mux.Handle(path, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1", "/debug/pprof/profile?seconds=1"} {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		require.NotEmpty(t, body, path)
	}
}
