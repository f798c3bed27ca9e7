package hub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// testLeaderElection checks that the operator runs with the timings of its
// install (operatorLeaderElection), then sets spec.leaderElection: the hub
// controller runs with
// the timings as flags; a renewDeadline beyond the default lease duration,
// which only the operator can see (the CRD sees the fields set, not the
// binary's defaults), sets Applied False with reason LeaderElectionInvalid
// and changes nothing; removed, the flags go, and the suite's timings are
// set again.
func testLeaderElection(t *testing.T, s *suite) {
	d := func(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }
	op, ok := s.runner.Process("hub", config.OperatorNamespace, config.HubOperatorDeployment)
	if !ok || strings.Join(op.Args, " ") == "" {
		t.Fatal("the runner runs no ClusterManager operator")
	}
	for _, want := range operatorLeaderElection.LeaderElectionArgs() {
		if !strings.Contains(strings.Join(op.Args, " "), want) {
			t.Errorf("the operator runs with %q, which lacks %s", op.Args, want)
		}
	}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.LeaderElection = &operatorv1.LeaderElectionConfiguration{LeaseDuration: d(20 * time.Second), RenewDeadline: d(15 * time.Second), RetryPeriod: d(3 * time.Second)}
	})
	s.waitAvailable(t, gen)
	p := s.process(t, "--leader-elect-lease-duration=20s")
	for _, want := range []string{"--leader-elect-renew-deadline=15s", "--leader-elect-retry-period=3s"} {
		if !strings.Contains(strings.Join(p.Args, " "), want) {
			t.Errorf("the hub controller runs with %q, which lacks %s", p.Args, want)
		}
	}

	dep, err := s.controller(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	renew := leaderelect.Hub.LeaseDuration + 10*time.Second
	gen = s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.LeaderElection = &operatorv1.LeaderElectionConfiguration{RenewDeadline: d(renew)}
	})
	applied := s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionFalse)
	want := fmt.Sprintf("spec.leaderElection.leaseDuration %v must be longer than spec.leaderElection.renewDeadline %v", leaderelect.Hub.LeaseDuration, renew)
	if applied.Reason != config.ReasonLeaderElectionInvalid || !strings.Contains(applied.Message, want) {
		t.Errorf("Applied = %s: %s, want reason %s with %q", applied.Reason, applied.Message, config.ReasonLeaderElectionInvalid, want)
	}
	s.waitCondition(t, gen, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionTrue)
	if now, err := s.controller(s.ctx); err != nil || now.Generation != dep.Generation {
		t.Errorf("the hub controller Deployment changed: generation %d, was %d (%v)", now.Generation, dep.Generation, err)
	}

	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.LeaderElection = nil }))
	s.waitController(t, "no --leader-elect-* timings", func(dep *appsv1.Deployment) error {
		if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(args, "--leader-elect-lease-duration") {
			return fmt.Errorf("args %s", args)
		}
		return nil
	})
	// Back to the suite's timings (hubtest.LeaderElection).
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.LeaderElection = leaderElectionSpec(hubtest.LeaderElection.Timings)
	}))
}

// leaderElectionSpec returns spec.leaderElection with timings t.
func leaderElectionSpec(t leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
	return &operatorv1.LeaderElectionConfiguration{LeaseDuration: &metav1.Duration{Duration: t.LeaseDuration},
		RenewDeadline: &metav1.Duration{Duration: t.RenewDeadline}, RetryPeriod: &metav1.Duration{Duration: t.RetryPeriod}}
}
