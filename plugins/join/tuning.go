package join

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// addTuningFlags registers the flags of the agent's and the Klusterlet
// operator's worker counts and leader election timings.
func (o *Options) addTuningFlags(fs *pflag.FlagSet) {
	fs.Int32Var(&o.ManifestWorkWorkers, "manifestwork-agent-workers", o.ManifestWorkWorkers, "How many ManifestWorks the work agent reconciles at once (at least 1). Sets the Klusterlet's spec.workConfiguration.workers.manifestWorks. Default: 10.")
	fs.Int32Var(&o.AppliedWorkWorkers, "appliedmanifestwork-finalize-controller-workers", o.AppliedWorkWorkers, "How many AppliedManifestWorks the work agent finalizes or evicts at once (at least 1). Sets the Klusterlet's spec.workConfiguration.workers.appliedManifestWorkFinalize. Default: 10.")
	cli.AddLeaderElectionFlags(fs, &o.LeaderElection, "", "the agent", "the Klusterlet's spec.leaderElection", leaderelect.Managed)
	cli.AddLeaderElectionFlags(fs, &o.OperatorLeaderElection, "operator-", "the Klusterlet operator", "its Deployment's flags", leaderelect.Managed)
}

// validateTuning checks the worker counts given (left out, they stay unset) and
// the leader election timings.
func (o *Options) validateTuning() []error {
	var errs []error
	for _, f := range []struct {
		flag string
		n    int32
	}{{"manifestwork-agent-workers", o.ManifestWorkWorkers}, {"appliedmanifestwork-finalize-controller-workers", o.AppliedWorkWorkers}} {
		if f.n < 0 || (f.n == 0 && slices.Contains(o.changed, f.flag)) {
			errs = append(errs, fmt.Errorf("--%s %d must be at least 1; leave it out for the default, 10", f.flag, f.n))
		}
	}
	return append(errs, o.LeaderElection.Validate(), o.OperatorLeaderElection.Validate())
}
