package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// TestLeaderElectionFlags checks that the flags fill the timings, leave
// unset ones zero, and that a refused combination names the flag.
func TestLeaderElectionFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    [3]time.Duration
		wantErr string
	}{
		{name: "unset"},
		{name: "set", args: []string{"--operator-leader-elect-lease-duration=2m", "--operator-leader-elect-retry-period=1s"}, want: [3]time.Duration{2 * time.Minute, 0, time.Second}},
		{name: "renew beyond lease", args: []string{"--operator-leader-elect-lease-duration=5s", "--operator-leader-elect-renew-deadline=6s"}, wantErr: "--operator-leader-elect-lease-duration 5s must be longer than --operator-leader-elect-renew-deadline 6s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l LeaderElectionFlags
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			AddLeaderElectionFlags(fs, &l, "operator-", "the operator", "its Deployment's flags", leaderelect.Hub)
			require.NoError(t, fs.Parse(tc.args))
			err := l.Validate()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, [3]time.Duration{l.LeaseDuration, l.RenewDeadline, l.RetryPeriod})
		})
	}
}
