package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultPollInterval is how often Wait checks.
const DefaultPollInterval = 500 * time.Millisecond

// Check reports whether what Wait waits for is done and, either way, a
// one-line description of the current state, such as "deployment
// open-cluster-management-hub/ocm-hub-controller: 0/1 available".
type Check func(ctx context.Context) (done bool, state string, err error)

// stopError marks an error of a Check that ends the wait at once.
type stopError struct{ err error }

func (e stopError) Error() string { return e.err.Error() }
func (e stopError) Unwrap() error { return e.err }

// Stop returns err marked so that Wait ends at once with it instead of
// checking again: what it waits for cannot happen any more, such as a
// rollout the cluster reports as failed for good.
func Stop(err error) error { return stopError{err} }

// Wait polls check until it reports done, printing each new state to out as
// a progress line. It fails after timeout with an error that names what was
// awaited, the last state seen and, if the last check failed, its error; an
// error from check is retried, unless it was made with Stop: then Wait
// returns it at once.
func Wait(ctx context.Context, out io.Writer, timeout time.Duration, what string, check Check) error {
	last, lastErr := "", error(nil)
	var stop stopError
	err := wait.PollUntilContextTimeout(ctx, DefaultPollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, state, err := check(ctx)
		if errors.As(err, &stop) {
			return false, err
		}
		if err != nil {
			// A check cut short by the timeout says nothing new about the state.
			if ctx.Err() == nil {
				lastErr = err
			}
			return false, nil
		}
		lastErr = nil
		if state != "" && state != last {
			fmt.Fprintf(out, "Waiting for %s: %s\n", what, state)
			last = state
		}
		return done, nil
	})
	if err == nil {
		return nil
	}
	if errors.As(err, &stop) {
		return stop.err
	}
	switch {
	case last != "" && lastErr != nil:
		return fmt.Errorf("timed out after %s waiting for %s; last state: %s; last error: %w", timeout, what, last, lastErr)
	case lastErr != nil:
		return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, lastErr)
	case last != "":
		return fmt.Errorf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
	}
	return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, err)
}
