// Package leaderelect holds the leader election timings of the product's
// controllers and the one rule that checks them, which the ocm-controller
// binary applies to its --leader-elect-* flags and the ClusterManager and
// Klusterlet operators to spec.leaderElection.
package leaderelect

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// The default timings, by the API server that holds the Lease. A standby
// replica takes the Lease at most LeaseDuration (plus one RetryPeriod)
// after the leader's last renewal; a leader that cannot renew for
// RenewDeadline stops, and its process restarts. A leader that stops
// cleanly (a rollout, a drained node) releases the Lease, and a standby
// takes it within a RetryPeriod whatever the lease duration.
var (
	// Hub are the hub controller's and the ClusterManager operator's,
	// whose Leases live on the hub's API server, which the fleet loads: on
	// a saturated hub API server (docs/sizing.md, "Leader election")
	// renewals took 4.0 s on average and 11 % of them more than 10 s, and
	// controller-runtime's 15 s/10 s/2 s restarted both 22 times in 12
	// minutes. A renew deadline of 40 s outlasts several such renewals in a
	// row; the lease keeps 20 s beyond it, so that a standby never acts
	// while a slow leader still does.
	Hub = Timings{LeaseDuration: 60 * time.Second, RenewDeadline: 40 * time.Second, RetryPeriod: 2 * time.Second}
	// Managed are the agent's and the Klusterlet operator's,
	// controller-runtime's: their Leases live on the managed cluster's API
	// server, which the fleet does not load, and they run one replica, so
	// that a longer lease would only make a restarted agent wait longer
	// after a crash.
	Managed = Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
)

// Timings are a lease duration, a renew deadline and a retry period. A zero
// field means its default (Or).
type Timings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Or returns t with each zero field set to that of defaults.
func (t Timings) Or(defaults Timings) Timings {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = defaults.LeaseDuration
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = defaults.RenewDeadline
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = defaults.RetryPeriod
	}
	return t
}

// Names are how the caller's users spell the three timings in errors: flag
// names for the binary, field paths for the operators.
type Names struct {
	LeaseDuration, RenewDeadline, RetryPeriod string
}

// FlagNames are the ocm-controller flags.
var FlagNames = Names{
	LeaseDuration: "--leader-elect-lease-duration",
	RenewDeadline: "--leader-elect-renew-deadline",
	RetryPeriod:   "--leader-elect-retry-period",
}

// FieldNames returns the fields of a leaderElection object at path (such
// as "spec.leaderElection").
func FieldNames(path string) Names {
	return Names{LeaseDuration: path + ".leaseDuration", RenewDeadline: path + ".renewDeadline", RetryPeriod: path + ".retryPeriod"}
}

// Error is a timing the leader elector would refuse; Field is the name (of
// Names) of the timing to change.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + " " + e.Message }

// Validate checks t, with each zero field at that of defaults, the way
// client-go's leader elector does when it starts (every timing positive,
// the renew deadline longer than JitterFactor retry periods, the lease
// longer than the renew deadline), so that a bad combination is refused
// where it is set rather than failing after start. Errors name the timings
// by names.
func Validate(t, defaults Timings, names Names) error {
	t = t.Or(defaults)
	switch {
	case t.LeaseDuration <= 0:
		return &Error{Field: names.LeaseDuration, Message: fmt.Sprintf("%v must be positive", t.LeaseDuration)}
	case t.RenewDeadline <= 0:
		return &Error{Field: names.RenewDeadline, Message: fmt.Sprintf("%v must be positive", t.RenewDeadline)}
	case t.RetryPeriod <= 0:
		return &Error{Field: names.RetryPeriod, Message: fmt.Sprintf("%v must be positive", t.RetryPeriod)}
	case t.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(t.RetryPeriod)):
		return &Error{Field: names.RenewDeadline, Message: fmt.Sprintf("%v must be longer than %v times %s %v; lengthen it or shorten %s",
			t.RenewDeadline, leaderelection.JitterFactor, names.RetryPeriod, t.RetryPeriod, names.RetryPeriod)}
	case t.LeaseDuration <= t.RenewDeadline:
		return &Error{Field: names.LeaseDuration, Message: fmt.Sprintf("%v must be longer than %s %v; lengthen it or shorten %s",
			t.LeaseDuration, names.RenewDeadline, t.RenewDeadline, names.RenewDeadline)}
	}
	return nil
}

// Args returns the ocm-controller flags that set t's non-zero fields, in
// the order of Names.
func Args(t Timings) []string {
	var args []string
	for _, a := range []struct {
		flag string
		d    time.Duration
	}{{FlagNames.LeaseDuration, t.LeaseDuration}, {FlagNames.RenewDeadline, t.RenewDeadline}, {FlagNames.RetryPeriod, t.RetryPeriod}} {
		if a.d != 0 {
			args = append(args, a.flag+"="+a.d.String())
		}
	}
	return args
}
