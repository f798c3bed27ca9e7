package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWait(t *testing.T) {
	tests := []struct {
		name    string
		check   func() Check
		wantErr string
		wantOut string
		timeout time.Duration
	}{
		{"done", func() Check {
			return func(context.Context) (bool, string, error) { return true, "ready", nil }
		}, "", "Waiting for x: ready\n", 0},
		{"last state survives a check cut short by the timeout", func() Check {
			calls := 0
			return func(ctx context.Context) (bool, string, error) {
				calls++
				if calls == 1 {
					return false, "1 left", nil
				}
				<-ctx.Done()
				return false, "", ctx.Err()
			}
		}, "timed out after 200ms waiting for x; last state: 1 left", "Waiting for x: 1 left\n", 0},
		{"an error that ends the wait is reported with the last state", func() Check {
			calls := 0
			return func(context.Context) (bool, string, error) {
				calls++
				if calls == 1 {
					return false, "1 left", nil
				}
				return false, "", errors.New("rate: Wait(n=1) would exceed context deadline")
			}
		}, "last state: 1 left; last error: rate: Wait(n=1)", "Waiting for x: 1 left\n", 1200 * time.Millisecond},
		{"an error made with Stop ends the wait at once", func() Check {
			return func(context.Context) (bool, string, error) {
				return false, "", Stop(errors.New("rollout failed"))
			}
		}, "rollout failed", "", time.Hour},
		{"a persistent error is reported", func() Check {
			return func(context.Context) (bool, string, error) { return false, "", errors.New("forbidden") }
		}, "waiting for x: forbidden", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 200 * time.Millisecond
			}
			err := Wait(context.Background(), &out, timeout, "x", tt.check())
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("progress = %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}
