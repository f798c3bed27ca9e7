package framework

import (
	"context"
	"testing"
	"time"
)

// PollInterval is how often Eventually looks first, and how often
// Consistently looks.
const PollInterval = 100 * time.Millisecond

// pollCap is how often, at the least, Eventually looks once a wait has gone
// on: the interval grows by half at each look from PollInterval to pollCap,
// so a condition that holds soon is seen within a tenth of a second, and a
// wait of a minute reads the API server about 120 times instead of 600 (in
// make test, several tests wait at once on every API server, and their reads
// were much of its CPU).
const pollCap = 500 * time.Millisecond

// Eventually calls cond until it returns true, first after PollInterval and
// then less often, up to every pollCap, and fails t with what and the last
// error cond returned when timeout passes or ctx ends first. An error from
// cond means "not yet", whatever cond's boolean (return
// client.IgnoreNotFound(err) when NotFound is the goal); the last one is what
// the failure message reports if the condition never holds.
func Eventually(ctx context.Context, t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	interval := PollInterval
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
		case <-timer.C:
		}
		ok, err := cond(ctx)
		switch {
		case err != nil:
			last = err
		case ok:
			return
		}
		timer.Reset(interval)
		interval = min(interval*3/2, pollCap)
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
