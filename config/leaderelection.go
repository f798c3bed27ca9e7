package config

import (
	"errors"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// ReasonLeaderElectionInvalid is the reason of condition Applied False when
// a ClusterManager's or Klusterlet's spec.leaderElection is a combination
// the leader elector refuses (leaderelect.Validate), counting the defaults
// of the fields it leaves unset.
const ReasonLeaderElectionInvalid = "LeaderElectionInvalid"

// LeaderElection are the leader election timings of a rendered
// ocm-controller Deployment; zero fields render no flag, leaving the
// binary's defaults.
type LeaderElection struct {
	leaderelect.Timings
}

// LeaderElectionArgs are the --leader-elect-* flags of the set timings.
func (l LeaderElection) LeaderElectionArgs() []string { return leaderelect.Args(l.Timings) }

// leaderElectionValues returns the timings of spec.leaderElection le (nil:
// none set), or a *FieldError when the leader elector would refuse them
// with defaults (the component's) in the fields le leaves unset.
func leaderElectionValues(le *operatorv1.LeaderElectionConfiguration, defaults leaderelect.Timings) (LeaderElection, error) {
	var t leaderelect.Timings
	if le == nil {
		return LeaderElection{}, nil
	}
	if le.LeaseDuration != nil {
		t.LeaseDuration = le.LeaseDuration.Duration
	}
	if le.RenewDeadline != nil {
		t.RenewDeadline = le.RenewDeadline.Duration
	}
	if le.RetryPeriod != nil {
		t.RetryPeriod = le.RetryPeriod.Duration
	}
	if err := leaderelect.Validate(t, defaults, leaderelect.FieldNames("spec.leaderElection")); err != nil {
		var e *leaderelect.Error
		if errors.As(err, &e) {
			return LeaderElection{}, &FieldError{Reason: ReasonLeaderElectionInvalid, Message: err.Error() +
				" (unset fields count at their defaults: leaseDuration " + defaults.LeaseDuration.String() +
				", renewDeadline " + defaults.RenewDeadline.String() + ", retryPeriod " + defaults.RetryPeriod.String() + ")"}
		}
		return LeaderElection{}, err
	}
	return LeaderElection{Timings: t}, nil
}
