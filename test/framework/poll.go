package framework

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// PollInterval is how often Eventually looks again.
const PollInterval = 100 * time.Millisecond

// Eventually calls cond every PollInterval until it returns true, and fails
// t with what and the last error cond returned when timeout passes or ctx
// ends first. An error from cond means "not yet", whatever cond's boolean
// (return client.IgnoreNotFound(err) when NotFound is the goal); the last
// one is what the failure message reports if the condition never holds.
func Eventually(ctx context.Context, t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
}

// Consistently calls cond every PollInterval for duration and fails t with
// what as soon as cond returns false or an error: the check that something
// does not happen. Choose duration well above the time the thing would take
// if it happened. cond gets ctx itself, so that no call fails for lack of
// time at the end of the period.
func Consistently(ctx context.Context, t testing.TB, duration time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	end := time.Now().Add(duration)
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil || !ok {
			t.Fatalf("%s did not hold for %s (error: %v)", what, duration, err)
		}
		if !time.Now().Before(end) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
