package cli

import (
	"context"
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

// Wait polls check until it reports done, printing each new state to out as
// a progress line. It fails after timeout with an error that names what was
// awaited, the last state seen and, if the last check failed, its error; an
// error from check is retried.
func Wait(ctx context.Context, out io.Writer, timeout time.Duration, what string, check Check) error {
	last, lastErr := "", error(nil)
	err := wait.PollUntilContextTimeout(ctx, DefaultPollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, state, err := check(ctx)
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
