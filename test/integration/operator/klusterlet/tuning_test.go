package klusterlet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testTuning sets the work agent's workers and the agent's leader election
// timings on the Klusterlet and checks that the running agent has them as
// flags; then a leaderElection the leader elector would refuse only with
// the default of a field left unset (the CRD cannot see it) sets Applied
// False with reason LeaderElectionInvalid and changes nothing.
func (s *suite) testTuning(t *testing.T) {
	t.Run("workers and leader election reach the agent's flags", func(t *testing.T) {
		ns := s.klusterlet(t).AgentNamespace()
		before := s.waitAvailable(t, "the agent before the edit", ns)
		s.edit(t, func(k *operatorv1.Klusterlet) {
			if k.Spec.WorkConfiguration == nil {
				k.Spec.WorkConfiguration = &operatorv1.WorkAgentConfiguration{}
			}
			k.Spec.WorkConfiguration.Workers = &operatorv1.WorkAgentWorkers{ManifestWorks: 3, AppliedManifestWorkFinalize: 2}
			k.Spec.LeaderElection = &operatorv1.LeaderElectionConfiguration{LeaseDuration: &metav1.Duration{Duration: 20 * time.Second},
				RenewDeadline: &metav1.Duration{Duration: 15 * time.Second}, RetryPeriod: &metav1.Duration{Duration: 3 * time.Second}}
		})
		dep := s.waitRolled(t, ns, before)
		args := s.processArgs(t, ns, dep)
		for _, want := range []string{"--manifestwork-agent-workers=3", "--appliedmanifestwork-finalize-controller-workers=2",
			"--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=15s", "--leader-elect-retry-period=3s"} {
			if !slices.Contains(args, want) {
				t.Errorf("the agent runs with %q, which lacks %s", args, want)
			}
		}
		s.waitJoined(t, s.klusterlet(t).Spec.ClusterName)
	})

	t.Run("a refused leaderElection sets Applied False and changes nothing", func(t *testing.T) {
		ns := s.klusterlet(t).AgentNamespace()
		before := s.waitAvailable(t, "the agent before the bad value", ns)
		renew := leaderelect.Managed.LeaseDuration + 10*time.Second
		s.edit(t, func(k *operatorv1.Klusterlet) {
			k.Spec.LeaderElection = &operatorv1.LeaderElectionConfiguration{RenewDeadline: &metav1.Duration{Duration: renew}}
		})
		want := fmt.Sprintf("spec.leaderElection.leaseDuration %v must be longer than spec.leaderElection.renewDeadline %v", leaderelect.Managed.LeaseDuration, renew)
		framework.Eventually(s.ctx, t, wait, "Applied False with reason LeaderElectionInvalid", func(context.Context) (bool, error) {
			k := s.klusterlet(t)
			c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletApplied)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != config.ReasonLeaderElectionInvalid || c.ObservedGeneration != k.Generation {
				return false, fmt.Errorf("Applied %+v", c)
			}
			if !strings.Contains(c.Message, want) {
				return false, fmt.Errorf("Applied message %q lacks %q", c.Message, want)
			}
			return true, nil
		})
		now := &appsv1.Deployment{}
		if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: before.Namespace, Name: before.Name}, now); err != nil {
			t.Fatal(err)
		}
		if now.Generation != before.Generation {
			t.Errorf("the agent Deployment changed, generation %d, was %d", now.Generation, before.Generation)
		}
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.LeaderElection = nil })
		dep := s.waitRolled(t, ns, before)
		if args := strings.Join(s.processArgs(t, ns, dep), " "); strings.Contains(args, "--leader-elect-lease-duration") {
			t.Errorf("the agent runs with %q after spec.leaderElection was removed", args)
		}
	})
}
