package cli

import (
	"github.com/spf13/pflag"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// LeaderElectionFlags are the leader election timings of one component that
// an install verb sets through three flags, --<prefix>leader-elect-*; zero
// timings are left unset (the component's defaults).
type LeaderElectionFlags struct {
	leaderelect.Timings
	prefix   string
	defaults leaderelect.Timings
}

// AddLeaderElectionFlags registers --<prefix>leader-elect-lease-duration,
// -renew-deadline and -retry-period on fs for component, whose timings the
// flags set in where (a resource field or the operator's Deployment) and
// whose defaults are defaults (leaderelect.Hub or leaderelect.Managed).
func AddLeaderElectionFlags(fs *pflag.FlagSet, l *LeaderElectionFlags, prefix, component, where string, defaults leaderelect.Timings) {
	l.prefix, l.defaults = prefix, defaults
	n := l.names()
	fs.DurationVar(&l.LeaseDuration, n.LeaseDuration[2:], 0, "How long a standby replica of "+component+" waits after the leader's last renewal before it takes over; longer rides out a slow API server, shorter fails over sooner. Sets "+where+". Default: "+defaults.LeaseDuration.String()+".")
	fs.DurationVar(&l.RenewDeadline, n.RenewDeadline[2:], 0, "How long the leader of "+component+" keeps trying to renew its Lease before it stops and restarts; shorter than "+n.LeaseDuration+". Sets "+where+". Default: "+defaults.RenewDeadline.String()+".")
	fs.DurationVar(&l.RetryPeriod, n.RetryPeriod[2:], 0, "How often the replicas of "+component+" try to acquire or renew the Lease; "+n.RenewDeadline+" must exceed 1.2 times it. Sets "+where+". Default: "+defaults.RetryPeriod.String()+".")
}

// Validate checks the timings with the components' own rule
// (leaderelect.Validate), naming the flags.
func (l LeaderElectionFlags) Validate() error {
	return leaderelect.Validate(l.Timings, l.defaults.Or(leaderelect.Managed), l.names())
}

// names are the three flags.
func (l LeaderElectionFlags) names() leaderelect.Names {
	return leaderelect.Names{
		LeaseDuration: "--" + l.prefix + "leader-elect-lease-duration",
		RenewDeadline: "--" + l.prefix + "leader-elect-renew-deadline",
		RetryPeriod:   "--" + l.prefix + "leader-elect-retry-period",
	}
}
