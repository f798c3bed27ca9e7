package replicaset

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

const (
	c1, c2, c3, c4 = "cluster1", "cluster2", "cluster3", "cluster4"
	// True and False are condition statuses.
	True, False = metav1.ConditionTrue, metav1.ConditionFalse
)

// Condition type shorthands.
const (
	verified  = workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified
	rolledOut = workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut
	applied   = workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied
)

// progressive is a Progressive strategy.
func progressive(maxConcurrency, maxFailures int32, minSuccess time.Duration, deadline string) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(maxFailures),
			MinSuccessTime: metav1.Duration{Duration: minSuccess}, ProgressDeadline: deadline},
		MaxConcurrency: intstr.FromInt32(maxConcurrency),
	}}
}

// rolloutMessage returns a check that PlacementRolledOut's message contains s.
func rolloutMessage(s string) func(*workv1alpha1.ManifestWorkReplicaSet) bool {
	return func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, rolledOut)
		return c != nil && c.Status == False && strings.Contains(c.Message, s)
	}
}

// TestReplicaSet runs every ManifestWorkReplicaSet scenario on one hub.
func TestReplicaSet(t *testing.T) {
	framework.SkipIfShort(t)
	s := setup(t)
	for i, c := range []string{c1, c2, c3, c4, "cluster5", "cluster6", "cluster7", "cluster8"} {
		labels := map[string]string{"index": string(rune('1' + i))}
		if c == c2 {
			labels["env"] = "prod"
		}
		s.cluster(t, c, labels)
	}
	t.Run("All creates a work on every cluster; leaving the decisions removes it", s.testAll)
	t.Run("two placements: a cluster belongs to the first deciding it", s.testTwoPlacements)
	t.Run("Progressive advances one cluster at a time; a template change rolls out again", s.testProgressive)
	t.Run("a failing cluster stops the rollout at maxFailures", s.testMaxFailures)
	t.Run("ProgressivePerGroup: mandatory group, then group by group", s.testPerGroup)
	t.Run("minSuccessTime holds the slot", s.testMinSuccessTime)
	t.Run("progressDeadline times clusters out", s.testProgressDeadline)
	t.Run("an unparsable progressDeadline stops the placement's rollout", s.testInvalidStrategy)
	t.Run("overrides by name and label", s.testOverrides)
	t.Run("a same-named work of someone else is left alone", s.testForeign)
	t.Run("cascade deletion Background and Foreground", s.testCascade)
	t.Run("a set whose namespace.name is longer than a label value", s.testLongName)
	t.Run("seed 001-rolloutstrategy-progressive", s.testSeed)
	t.Run("ttlSecondsAfterFinished deletes completed works", s.testTTL)
	t.Run("executor: execute-as at admission, denied works reported", s.testExecutor)
	t.Run("a take-over rule reaches every work", s.testTakeOver)
	t.Run("revisions: history and undo", s.testRevisions)
	t.Run("gates: stages wait for approvals", s.testGates)
	t.Run("pause, resume, abort and abort with rollback", s.testPauseAbort)
	t.Run("failure strategy Rollback", s.testFailureStrategy)
	t.Run("the MCP server reads and steers a rollout", s.testMCP)
}

func (s *suite) testAll(t *testing.T) {
	const ns, name = "all", "all"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")))
	works := s.waitWorks(t, ns, name, c1, c2, c3)
	for c, mw := range works {
		if mw.Name != name || mw.Labels[workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey] != "p" || value(t, mw) != "v1" {
			t.Errorf("work in %s: name %s, labels %v, value %q", c, mw.Name, mw.Labels, value(t, mw))
		}
	}
	m := s.waitStatus(t, ns, name, "verified, progressing", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return cond(verified, True, workv1alpha1.ReasonAsExpected)(m) && cond(rolledOut, False, workv1alpha1.ReasonProgressing)(m) &&
			cond(applied, False, workv1alpha1.ReasonProcessing)(m) && m.Status.Summary.Total == 3
	})
	if !strings.Contains(strings.Join(m.Finalizers, ","), workv1alpha1.ManifestWorkReplicaSetFinalizer) {
		t.Errorf("finalizers %v", m.Finalizers)
	}
	for _, c := range []string{c1, c2, c3} {
		s.report(t, c, name, True)
	}
	m = s.waitStatus(t, ns, name, "complete", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return cond(rolledOut, True, workv1alpha1.ReasonComplete)(m) && cond(applied, True, workv1alpha1.ReasonAsExpected)(m)
	})
	want := workv1alpha1.ManifestWorkReplicaSetSummary{Total: 3, DesiredTotal: 3, Applied: 3, Available: 3, Updated: 3}
	if m.Status.Summary != want || len(m.Status.PlacementsSummary) != 1 || m.Status.PlacementsSummary[0].AvailableDecisionGroups != "1/1" {
		t.Errorf("summary %+v, placements %+v; want %+v", m.Status.Summary, m.Status.PlacementsSummary, want)
	}

	s.decisions(t, ns, "p", group{clusters: []string{c1, c2}})
	s.waitWorks(t, ns, name, c1, c2)
	s.waitStatus(t, ns, name, "two desired", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Status.Summary.DesiredTotal == 2 && m.Status.Summary.Total == 2
	})
	s.decisions(t, ns, "p")
	s.waitWorks(t, ns, name)
	s.waitStatus(t, ns, name, "PlacementDecisionNotFound", cond(verified, False, workv1alpha1.ReasonPlacementDecisionNotFound))
}

func (s *suite) testProgressive(t *testing.T) {
	const ns, name = "progressive", "prog"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}}, group{clusters: []string{c3}})
	mwrs := newMWRS(ns, name, "p", progressive(1, 0, 0, "None"), "v1")
	kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))
	s.waitStatus(t, ns, name, "first cluster started", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Status.Summary.DesiredTotal == 3 && m.Status.Summary.Total >= 1
	})
	s.expectWorks(t, ns, name, c1)
	s.report(t, c1, name, True)
	s.waitWorks(t, ns, name, c1, c2)
	s.waitStatus(t, ns, name, "c1 available", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Status.Summary.Available == 1 && m.Status.Summary.Total == 2
	})
	s.expectWorks(t, ns, name, c1, c2)
	s.report(t, c2, name, True)
	s.waitWorks(t, ns, name, c1, c2, c3)
	s.report(t, c3, name, True)
	s.waitStatus(t, ns, name, "complete", cond(rolledOut, True, workv1alpha1.ReasonComplete))

	// A new template goes out one cluster at a time again.
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKeyFromObject(mwrs), mwrs))
	mwrs.Spec.ManifestWorkTemplate.Workload.Manifests[0] = configMap("v2")
	kit.Must(t, "update template", s.admin.Update(s.ctx, mwrs))
	s.waitStatus(t, ns, name, "one cluster updated", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Generation == mwrs.Generation && m.Status.Summary.Updated == 1 && cond(rolledOut, False, workv1alpha1.ReasonProgressing)(m)
	})
	works, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list", err)
	if value(t, works[c1]) != "v2" || value(t, works[c2]) != "v1" || value(t, works[c3]) != "v1" {
		t.Fatalf("values %s %s %s, want v2 v1 v1", value(t, works[c1]), value(t, works[c2]), value(t, works[c3]))
	}
	s.report(t, c1, name, True)
	s.waitStatus(t, ns, name, "second cluster updated", func(m *workv1alpha1.ManifestWorkReplicaSet) bool { return m.Status.Summary.Updated == 2 })
	works, err = s.works(s.ctx, ns, name)
	kit.Must(t, "list", err)
	if value(t, works[c2]) != "v2" || value(t, works[c3]) != "v1" {
		t.Fatalf("values %s %s, want v2 v1", value(t, works[c2]), value(t, works[c3]))
	}
}

func (s *suite) testMaxFailures(t *testing.T) {
	const ns, name = "maxfailures", "mf"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3, c4}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", progressive(2, 0, 0, "None"), "v1")))
	s.waitWorks(t, ns, name, c1, c2)
	s.report(t, c1, name, False)
	s.report(t, c2, name, True)
	s.waitStatus(t, ns, name, "stopped at maxFailures", rolloutMessage("stopped: failures exceed maxFailures"))
	s.waitStatus(t, ns, name, "one not applied", cond(applied, False, workv1alpha1.ReasonNotAsExpected))
	s.expectWorks(t, ns, name, c1, c2)
	// The failed cluster recovers: the rollout goes on.
	s.report(t, c1, name, True)
	s.waitWorks(t, ns, name, c1, c2, c3, c4)
}

func (s *suite) testPerGroup(t *testing.T) {
	const ns, name = "pergroup", "pg"
	s.placement(t, ns, "p", group{name: "a", clusters: []string{c1, c2}}, group{name: "b", clusters: []string{c3}}, group{name: "canary", clusters: []string{c4}})
	strategy := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}},
	}}
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", strategy, "v1")))
	s.waitWorks(t, ns, name, c4)
	s.report(t, c4, name, True)
	s.waitWorks(t, ns, name, c4, c1, c2)
	s.report(t, c1, name, True)
	s.waitStatus(t, ns, name, "group a half available", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Status.Summary.Available == 2 && m.Status.PlacementsSummary[0].AvailableDecisionGroups == "1/3"
	})
	s.expectWorks(t, ns, name, c4, c1, c2)
	s.report(t, c2, name, True)
	s.waitWorks(t, ns, name, c4, c1, c2, c3)
}

func (s *suite) testMinSuccessTime(t *testing.T) {
	const ns, name, soak = "minsuccess", "ms", 3 * time.Second
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", progressive(1, 0, soak, "None"), "v1")))
	s.waitWorks(t, ns, name, c1)
	succeeded := s.report(t, c1, name, True)
	works := s.waitWorks(t, ns, name, c1, c2)
	if started := works[c2].CreationTimestamp.Time; started.Sub(succeeded) < soak {
		t.Errorf("cluster2 started %v after cluster1 succeeded, want at least minSuccessTime %v", started.Sub(succeeded), soak)
	}
}

func (s *suite) testProgressDeadline(t *testing.T) {
	const ns, name, deadline = "deadline", "pd", 2 * time.Second
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", progressive(1, 1, 0, "2s"), "v1")))
	first := s.waitWorks(t, ns, name, c1)[c1]
	// cluster1 never reports: it times out, counts as one failure, frees its slot.
	works := s.waitWorks(t, ns, name, c1, c2)
	written, err := time.Parse(time.RFC3339, first.Annotations[workv1alpha1.ManifestWorkSpecWrittenAnnotationKey])
	kit.Must(t, "read when cluster1's work was written", err)
	if d := works[c2].CreationTimestamp.Sub(written); d < deadline {
		t.Errorf("cluster2 started %v after cluster1, want at least progressDeadline %v", d, deadline)
	}
	s.waitStatus(t, ns, name, "cluster1 timed out", rolloutMessage("timed out: "+c1))
	// cluster2 times out too: two failures exceed maxFailures 1.
	s.waitStatus(t, ns, name, "stopped", rolloutMessage("stopped: failures exceed maxFailures"))
	s.expectWorks(t, ns, name, c1, c2)
}

func (s *suite) testInvalidStrategy(t *testing.T) {
	const ns, name = "invalid", "inv"
	s.placement(t, ns, "p", group{clusters: []string{c1}})
	// The CRD pattern lets "10mins" through; it is no duration.
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", progressive(1, 0, 0, "10mins"), "v1")))
	m := s.waitStatus(t, ns, name, "InvalidRolloutStrategy", cond(rolledOut, False, workv1alpha1.ReasonInvalidRolloutStrategy))
	if c := meta.FindStatusCondition(m.Status.Conditions, rolledOut); !strings.Contains(c.Message, `invalid progressDeadline "10mins"`) {
		t.Errorf("message %q", c.Message)
	}
	s.expectWorks(t, ns, name)
}

func (s *suite) testTwoPlacements(t *testing.T) {
	const ns, name = "twoplacements", "two"
	s.placement(t, ns, "p1", group{clusters: []string{c1}})
	kit.Must(t, "create p2", s.admin.Create(s.ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p2"}}))
	s.decisions(t, ns, "p2", group{clusters: []string{c1, c2}})
	mwrs := newMWRS(ns, name, "p1", clusterv1alpha1.RolloutStrategy{}, "v1")
	mwrs.Spec.PlacementRefs = append(mwrs.Spec.PlacementRefs, workv1alpha1.LocalPlacementReference{Name: "p2"})
	kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))
	works := s.waitWorks(t, ns, name, c1, c2)
	const label = workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey
	if works[c1].Labels[label] != "p1" || works[c2].Labels[label] != "p2" {
		t.Errorf("placement labels %s, %s; want p1, p2", works[c1].Labels[label], works[c2].Labels[label])
	}
	m := s.waitStatus(t, ns, name, "two placement summaries", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return len(m.Status.PlacementsSummary) == 2 && m.Status.Summary.Total == 2
	})
	if m.Status.PlacementsSummary[0].Summary.DesiredTotal != 1 || m.Status.PlacementsSummary[1].Summary.DesiredTotal != 1 {
		t.Errorf("placement summaries %+v", m.Status.PlacementsSummary)
	}
	// p1 drops cluster1: p2 owns it now; its work is relabeled, not rewritten.
	s.decisions(t, ns, "p1", group{})
	s.poll(t, "cluster1's work labeled p2", func(ctx context.Context) (bool, error) {
		works, err := s.works(ctx, ns, name)
		return err == nil && works[c1] != nil && works[c1].Labels[label] == "p2", err
	})
	after, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list", err)
	if after[c1].Generation != works[c1].Generation {
		t.Errorf("cluster1's work went from generation %d to %d; want its spec untouched", works[c1].Generation, after[c1].Generation)
	}
}
