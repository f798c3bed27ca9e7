package agent

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// The records of the ManifestWorkApplyLatency feature gate, as OCM's work
// agent writes them: one log line per record, its key flow one of these.
// A log pipeline joins mw_spoke_apply to the hub's write of the same
// {mw_namespace, mw_name, generation} to measure how long a ManifestWork
// takes to reach the managed cluster.
const (
	// flowSpokeApply starts the apply of a generation, once per generation.
	flowSpokeApply = "mw_spoke_apply"
	// flowResourceSpokeApply is a manifest's outcome in the first apply of
	// a generation.
	flowResourceSpokeApply = "mw_resource_spoke_apply"
	// flowResourceSpokeSync is a manifest's outcome in a later apply of the
	// same generation, when it differs from the outcome the status holds.
	flowResourceSpokeSync = "mw_resource_spoke_sync"
	// flowSpokeApplyResult ends the apply of a generation with its counts.
	flowSpokeApplyResult = "mw_spoke_apply_result"
)

// Outcomes of a manifest's apply, and of a whole generation's (with
// outcomePartial).
const (
	outcomeApplied  = "applied"
	outcomeFailed   = "failed"
	outcomeReadOnly = "read_only"
	outcomePartial  = "partial"
)

// applyRecordTime is RFC 3339 with milliseconds, in UTC.
const applyRecordTime = "2006-01-02T15:04:05.000Z07:00"

var (
	// resourceApplyTotal counts the manifests' apply outcomes
	// (work_manifestwork_resource_apply_total, as OCM names it).
	resourceApplyTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "work",
		Name:      "manifestwork_resource_apply_total",
		Help:      "Total number of ManifestWork resource apply results, by outcome (applied, failed, read_only). Counted with the ManifestWorkApplyLatency feature gate on.",
	}, []string{"outcome"})
	// manifestWorkApplyTotal counts the outcome of each generation's first
	// apply (work_manifestwork_apply_total).
	manifestWorkApplyTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "work",
		Name:      "manifestwork_apply_total",
		Help:      "Total number of ManifestWork apply results, once per generation, by outcome (applied, failed, partial, read_only). Counted with the ManifestWorkApplyLatency feature gate on.",
	}, []string{"outcome"})
	registerApplyMetrics sync.Once
	registerApplyErr     error
)

// applyRecorder writes the apply records and counts the apply outcomes of
// the ManifestWorkApplyLatency feature gate. A nil recorder records nothing.
type applyRecorder struct {
	log logr.Logger
	// mu guards seen: the newest generation of each work whose records this
	// process wrote. The status's WorkApplied.observedGeneration, written
	// after the apply, says the same across restarts; seen covers the
	// retries in which that write failed.
	mu   sync.Mutex
	seen map[string]int64
}

// newApplyRecorder returns a recorder logging to log, its counters
// registered with controller-runtime's metrics registry (served at the
// agent's /metrics).
func newApplyRecorder(log logr.Logger) (*applyRecorder, error) {
	registerApplyMetrics.Do(func() {
		for _, c := range []prometheus.Collector{resourceApplyTotal, manifestWorkApplyTotal} {
			var already prometheus.AlreadyRegisteredError
			if err := metrics.Registry.Register(c); err != nil && !errors.As(err, &already) {
				registerApplyErr = fmt.Errorf("register the ManifestWork apply metrics: %w", err)
			}
		}
	})
	return &applyRecorder{log: log, seen: map[string]int64{}}, registerApplyErr
}

// applyRun is the recording of one apply of a work.
type applyRun struct {
	r     *applyRecorder
	work  *workv1.ManifestWork
	first bool
	// counts of the first apply of the generation, by outcome.
	counts map[string]int
}

// begin starts recording an apply of work: the first of its generation
// writes mw_spoke_apply now. It returns nil when r is nil.
func (r *applyRecorder) begin(work *workv1.ManifestWork, manifests int) *applyRun {
	if r == nil {
		return nil
	}
	run := &applyRun{r: r, work: work, counts: map[string]int{}}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	if applied == nil || applied.ObservedGeneration < work.Generation {
		run.first = r.admit(work.Name, work.Generation)
	}
	if run.first {
		r.log.Info("manifestwork apply", run.keys(flowSpokeApply, "resource_count", manifests)...)
	}
	return run
}

// admit reports whether this process has not written the records of
// generation of work yet, and notes that it has.
func (r *applyRecorder) admit(work string, generation int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seen, ok := r.seen[work]; ok && seen >= generation {
		return false
	}
	r.seen[work] = generation
	return true
}

// forget drops a work that is gone.
func (r *applyRecorder) forget(work string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, work)
}

// resource records the apply of one manifest, whose previous status is
// prev (nil when none): in the first apply of a generation always, later
// only when its outcome changed (a read-only manifest's cannot).
func (run *applyRun) resource(res *apply.Result, prev *workv1.ManifestCondition) {
	if run == nil {
		return
	}
	outcome := manifestOutcome(res)
	resourceApplyTotal.WithLabelValues(outcome).Inc()
	flow := flowResourceSpokeApply
	var extra []any
	if run.first {
		run.counts[outcome]++
	} else {
		before := previousOutcome(prev)
		if outcome == outcomeReadOnly || before == "" || before == outcome {
			return
		}
		flow, extra = flowResourceSpokeSync, []any{"prev_outcome", before}
	}
	version := ""
	if res.Err == nil && res.Object != nil {
		version = res.Object.GetResourceVersion()
	}
	kv := run.keys(flow,
		"applied_kind", res.Meta.Kind,
		"applied_name", res.Meta.Name,
		"applied_namespace", res.Meta.Namespace,
		"applied_resource_version", version,
		"outcome", outcome)
	run.r.log.Info("manifestwork resource applied", append(kv, extra...)...)
}

// end writes mw_spoke_apply_result after the first apply of a generation.
func (run *applyRun) end(manifests int) {
	if run == nil || !run.first {
		return
	}
	applied, failed, readOnly := run.counts[outcomeApplied], run.counts[outcomeFailed], run.counts[outcomeReadOnly]
	outcome := workOutcome(applied, failed)
	manifestWorkApplyTotal.WithLabelValues(outcome).Inc()
	run.r.log.Info("manifestwork apply", run.keys(flowSpokeApplyResult,
		"resource_count", manifests,
		"applied_count", applied,
		"failed_count", failed,
		"read_only_count", readOnly,
		"outcome", outcome)...)
}

// keys returns the keys every record of run has, then more.
func (run *applyRun) keys(flow string, more ...any) []any {
	now := time.Now().UTC()
	kv := []any{
		"flow", flow,
		"mw_name", run.work.Name,
		"mw_namespace", run.work.Namespace,
		"generation", run.work.Generation,
		"ts_utc", now.Format(applyRecordTime),
		"ts_epoch_ms", now.UnixMilli(),
		"labels", run.work.Labels,
	}
	return append(kv, more...)
}

// manifestOutcome is the outcome of one manifest's apply: read_only for a
// ReadOnly manifest, which the agent reads and never writes.
func manifestOutcome(res *apply.Result) string {
	switch {
	case res.Strategy == workv1.UpdateStrategyTypeReadOnly:
		return outcomeReadOnly
	case res.Err != nil:
		return outcomeFailed
	default:
		return outcomeApplied
	}
}

// previousOutcome is the outcome the manifest's Applied condition in the
// work's status holds, "" when it has none.
func previousOutcome(prev *workv1.ManifestCondition) string {
	if prev == nil {
		return ""
	}
	c := meta.FindStatusCondition(prev.Conditions, workv1.ManifestApplied)
	switch {
	case c == nil:
		return ""
	case c.Status == metav1.ConditionTrue:
		return outcomeApplied
	default:
		return outcomeFailed
	}
}

// workOutcome is the outcome of a generation's apply from the counts of
// the manifests applied and failed: read_only when it had neither.
func workOutcome(applied, failed int) string {
	switch {
	case applied == 0 && failed == 0:
		return outcomeReadOnly
	case failed == 0:
		return outcomeApplied
	case applied == 0:
		return outcomeFailed
	default:
		return outcomePartial
	}
}

// applyRecordLogger is the logger of the apply records.
func applyRecordLogger() logr.Logger { return ctrl.Log.WithName("manifestwork-apply") }
