package addonagent

import (
	"testing"
)

// TestAddonAgent runs the add-on agent and the hub's add-on approver on one
// hub and one managed cluster: lease health, registration from request to
// working credential and back, forged requests, and a template add-on's
// custom signer with its deleted credentials coming back.
func TestAddonAgent(t *testing.T) {
	ctx, s := setup(t)
	t.Run("lease health", func(t *testing.T) { s.testLease(ctx, t) })
	t.Run("registration", func(t *testing.T) { s.testRegistration(ctx, t) })
	t.Run("forged requests", func(t *testing.T) { s.testForgedRequests(ctx, t) })
	t.Run("custom signer", func(t *testing.T) { s.testCustomSigner(ctx, t) })
}
