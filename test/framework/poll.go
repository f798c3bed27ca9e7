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
