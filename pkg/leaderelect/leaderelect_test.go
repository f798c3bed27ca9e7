package leaderelect

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValidate checks the rule against client-go's: defaults fill zero
// fields, and each refused combination names the timing to change, as a
// flag or as a field.
func TestValidate(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name      string
		t         Timings
		wantField string
	}{
		{name: "defaults", t: Timings{}},
		{name: "short", t: Timings{LeaseDuration: 4 * s, RenewDeadline: 3 * s, RetryPeriod: 500 * time.Millisecond}},
		{name: "lease equal to renew", t: Timings{LeaseDuration: 10 * s, RenewDeadline: 10 * s, RetryPeriod: s}, wantField: "leaseDuration"},
		{name: "lease at its default below a long renew", t: Timings{RenewDeadline: Hub.LeaseDuration + s}, wantField: "leaseDuration"},
		{name: "renew within the jitter of retry", t: Timings{LeaseDuration: 20 * s, RenewDeadline: 12 * s, RetryPeriod: 10 * s}, wantField: "renewDeadline"},
		{name: "negative retry", t: Timings{RetryPeriod: -s}, wantField: "retryPeriod"},
		{name: "negative lease", t: Timings{LeaseDuration: -s}, wantField: "leaseDuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.t, Hub, FieldNames("spec.leaderElection"))
			if tc.wantField == "" {
				require.NoError(t, err)
				return
			}
			var e *Error
			require.True(t, errors.As(err, &e), "error %v", err)
			require.Equal(t, "spec.leaderElection."+tc.wantField, e.Field)
			require.ErrorContains(t, err, "spec.leaderElection."+tc.wantField)
		})
	}
}

// TestDefaults checks that both sets of defaults pass the rule.
func TestDefaults(t *testing.T) {
	for _, d := range []Timings{Hub, Managed} {
		require.NoError(t, Validate(Timings{}, d, FlagNames))
	}
}

// TestArgs checks that only the set timings become flags.
func TestArgs(t *testing.T) {
	require.Empty(t, Args(Timings{}))
	require.Equal(t, []string{"--leader-elect-lease-duration=1m0s", "--leader-elect-retry-period=500ms"},
		Args(Timings{LeaseDuration: time.Minute, RetryPeriod: 500 * time.Millisecond}))
}
