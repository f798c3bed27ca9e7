package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// approverUser approves the gates: a hub user holding only the shipped
	// ClusterRole approverRole in setNamespace.
	approverUser = "release-approver"
	approverRole = "open-cluster-management:rollout-approver"
)

// BenchmarkApproveToNextStage rolls a ManifestWorkReplicaSet out over
// every cluster with a Progressive strategy cut into stages of -stage-size
// clusters, each gated Before. Revision 1 is approved stage by stage
// (its works are created; not recorded). Then the template changes
// (revision 2) and each stage is approved by `kubectl ocm work rollout
// approve --stage S`, run in process as approverUser, once the set reports
// the rollout waiting at its gate. For each stage it measures, from the
// approval's creation (a hub watch delivering the RolloutApproval), the
// first of the stage's works updated on the hub (a hub watch delivering it
// written from revision 2), the first Applied (acknowledged by its
// simulated agent), and every work of the stage Applied; then from the
// stage's last work Applied to the set reporting the next gate. Last, the
// whole rollout: from the template change to the set's rollout Complete.
func BenchmarkApproveToNextStage(b *testing.B) {
	if *stageSize < 1 {
		b.Fatalf("-stage-size %d: at least 1", *stageSize)
	}
	f := startFleet(b, true)
	ctx := b.Context()
	f.grantApprover(ctx, b)

	const name = "staged"
	times := &revisionTimes{}
	f.watchWorks(ctx, b, workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey, setLabel(b, name), times.observe)
	approvals := &firstSeen{}
	f.watch(ctx, b, &rolloutv1alpha1.RolloutApprovalList{}, &rolloutv1alpha1.RolloutApproval{}, func(o any, at time.Time) {
		if a, ok := o.(*rolloutv1alpha1.RolloutApproval); ok {
			approvals.mark(approvalKey(a.Spec.ManifestWorkReplicaSet, a.Spec.Revision, a.Spec.Stage), at)
		}
	}, client.InNamespace(setNamespace))
	set := newSet(name, clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive}, map[string]string{
		rolloutv1alpha1.GatesAnnotation:     string(rolloutv1alpha1.GateBefore),
		rolloutv1alpha1.StageSizeAnnotation: strconv.Itoa(*stageSize),
	}, configMap("default", name, "v1"))
	f.createSet(ctx, b, set, times)
	created := time.Now()
	for _, s := range f.runStages(ctx, b, name, 1, times, approvals) {
		b.Logf("revision 1 (works created), stage %s: approved → all %d Applied in %s", s.name, s.clusters, benchkit.Seconds(s.applied.last))
	}
	b.Logf("revision 1: created → rolled out with %d approvals in %s", (len(f.clusters)+*stageSize-1) / *stageSize, benchkit.Seconds(time.Since(created)))

	changed := time.Now()
	f.setTemplate(ctx, b, set, times, configMap("default", name, "v2"))
	stages := f.runStages(ctx, b, name, 2, times, approvals)
	total := time.Since(changed)

	var firstUpdated, firstApplied, allApplied []float64
	for _, s := range stages {
		firstUpdated = append(firstUpdated, s.updated.first.Seconds())
		firstApplied = append(firstApplied, s.applied.first.Seconds())
		allApplied = append(allApplied, s.applied.last.Seconds())
		benchkit.Record(b, fmt.Sprintf("stage %s (%d clusters): approval → first work updated / first Applied / all Applied", s.name, s.clusters),
			fmt.Sprintf("%.3f / %.3f / %.3f s", s.updated.first.Seconds(), s.applied.first.Seconds(), s.applied.last.Seconds()),
			fmt.Sprintf("approve ran %.2f s; stage Applied → set reports the next gate %.2f s", s.approve.Seconds(), s.waiting.Seconds()))
	}
	stat := func(xs []float64) string {
		return fmt.Sprintf("%.3f / %.3f s", benchkit.Quantile(xs, 0.5), benchkit.Quantile(xs, 1))
	}
	setup := fmt.Sprintf("%d clusters, %d stages of %d, Progressive, gates Before", len(f.clusters), len(stages), *stageSize)
	benchkit.Record(b, "approval → next stage's first work updated on the hub, p50 / max", stat(firstUpdated), setup)
	benchkit.Record(b, "approval → next stage's first work Applied, p50 / max", stat(firstApplied), "")
	benchkit.Record(b, "approval → whole stage Applied, p50 / max", stat(allApplied), "")
	benchkit.Record(b, fmt.Sprintf("template change → rollout Complete, %d gates approved as reached", len(stages)), benchkit.Seconds(total), kubeFleet)
	b.ReportMetric(benchkit.Quantile(firstUpdated, 0.5), "first-updated-p50-s")
	b.ReportMetric(benchkit.Quantile(firstApplied, 0.5), "first-applied-p50-s")
	b.ReportMetric(benchkit.Quantile(allApplied, 0.5), "stage-applied-p50-s")
	b.ReportMetric(total.Seconds(), "rollout-s")
	b.ReportMetric(0, "ns/op")
}

// grantApprover binds approverRole to approverUser in setNamespace, as an
// administrator lets a release manager approve.
func (f *fleet) grantApprover(ctx context.Context, b *testing.B) {
	b.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: approverUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: approverRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: approverUser}},
	}
	if err := f.HubClient.Create(ctx, rb); err != nil {
		b.Fatalf("bind %s to %s: %v", approverRole, approverUser, err)
	}
}

// runStages approves, one after the other, every stage of the rollout of
// revision rev of set name, each once the set reports the rollout waiting
// at its gate, and returns what each measured.
func (f *fleet) runStages(ctx context.Context, b *testing.B, name string, rev int64, times *revisionTimes, approvals *firstSeen) []stageResult {
	b.Helper()
	report := f.rolloutReport(ctx, b, name, rev)
	if len(report.Placements) != 1 {
		b.Fatalf("the rollout of %s has %d placements, want 1", name, len(report.Placements))
	}
	stages := report.Placements[0].Stages
	results := make([]stageResult, 0, len(stages))
	total := 0
	for k, st := range stages {
		clusters := make([]string, 0, len(st.Clusters))
		for _, c := range st.Clusters {
			clusters = append(clusters, c.Name)
		}
		total += len(clusters)
		f.waitSet(ctx, b, name, "waiting "+gateText(st.Name, rev), awaiting(st.Name, rev))

		r := f.mustOCM(ctx, b, "work", "rollout", "approve", name, "-n", setNamespace,
			"--stage", st.Name, "--gate", string(rollout.GateBefore), "--as", approverUser)
		what := fmt.Sprintf("stage %s of revision %d", st.Name, rev)
		var approved time.Time
		benchkit.Poll(ctx, b, benchkit.FastPoll, *opTimeout, "the watch to deliver the approval of "+what, func(context.Context) (bool, error) {
			var ok bool
			approved, ok = approvals.get(approvalKey(name, rev, st.Name))
			return ok, nil
		})
		waitApplied(ctx, b, times, clusters, what)
		updated, applied := times.snapshot()
		res := stageResult{name: st.Name, clusters: len(clusters), approve: r.took}
		var err error
		if res.updated, err = spreadOf(approved, clusters, updated); err != nil {
			b.Fatalf("%s updated: %v", what, err)
		}
		if res.applied, err = spreadOf(approved, clusters, applied); err != nil {
			b.Fatalf("%s Applied: %v", what, err)
		}
		var next time.Time
		if k+1 < len(stages) {
			next = f.waitSet(ctx, b, name, "waiting "+gateText(stages[k+1].Name, rev), awaiting(stages[k+1].Name, rev))
		} else {
			next = f.waitRolledOut(ctx, b, name)
		}
		res.waiting = next.Sub(approved.Add(res.applied.last))
		results = append(results, res)
	}
	if total != len(f.clusters) {
		b.Fatalf("the stages of %s hold %d clusters, want %d", name, total, len(f.clusters))
	}
	return results
}

// approvalKey names the Before gate of stage of revision rev of set.
func approvalKey(set string, rev int64, stage string) string {
	return fmt.Sprintf("%s/%d/%s", set, rev, stage)
}

// gateText is how the set's PlacementRolledOut condition names the Before
// gate of stage in the rollout of revision rev.
func gateText(stage string, rev int64) string {
	return fmt.Sprintf("approval %s of revision %d", rollout.Gate{Stage: stage, Type: rollout.GateBefore}, rev)
}

// awaiting is whether a set's rollout waits at the Before gate of stage of
// revision rev, as of the set's generation.
func awaiting(stage string, rev int64) func(*workv1alpha1.ManifestWorkReplicaSet) bool {
	want := gateText(stage, rev) + ":"
	return func(s *workv1alpha1.ManifestWorkReplicaSet) bool {
		c := meta.FindStatusCondition(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
		return c != nil && c.Reason == rolloutv1alpha1.ReasonAwaitingApproval && c.ObservedGeneration == s.Generation &&
			strings.Contains(c.Message, want)
	}
}

// rolloutReport runs `kubectl ocm work rollout status NAME -o json` as the
// admin until it reports revision rev, and returns the report.
func (f *fleet) rolloutReport(ctx context.Context, b *testing.B, name string, rev int64) *setstate.StatusReport {
	b.Helper()
	report := &setstate.StatusReport{}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, *opTimeout, fmt.Sprintf("kubectl ocm work rollout status %s to report revision %d", name, rev), func(ctx context.Context) (bool, error) {
		r := f.ocm(ctx, "work", "rollout", "status", name, "-n", setNamespace, "-o", "json")
		if r.err != nil {
			return false, fmt.Errorf("%w: %s", r.err, r.errOut)
		}
		if err := json.Unmarshal([]byte(r.out), report); err != nil {
			return false, fmt.Errorf("decode %q: %w", r.out, err)
		}
		return report.Revision == rev, nil
	})
	return report
}
