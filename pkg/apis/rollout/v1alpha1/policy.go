package v1alpha1

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Annotations of a ManifestWorkReplicaSet that control its rollout. OCM's
// ManifestWorkReplicaSet has no such fields; a set without them rolls out as
// in OCM. Admission (config/hub/37-rollout-admission.yaml) refuses values
// PolicyOf refuses.
const (
	// GatesAnnotation lists the gates of every stage: "Before", "After" or
	// "Before,After". Gates need a Progressive or ProgressivePerGroup
	// strategy; stages then run one after the other.
	GatesAnnotation = "rollout.kubectl-ocm.io/gates"
	// StageSizeAnnotation cuts a Progressive rollout into stages of this
	// many clusters instead of one stage per decision group.
	StageSizeAnnotation = "rollout.kubectl-ocm.io/stage-size"
	// HealthConditionAnnotation names a condition type the manifests of a
	// cluster's ManifestWork must report True (from conditionRules or the
	// well-known status of the kind) before the cluster counts as succeeded,
	// so that it holds the next stage.
	HealthConditionAnnotation = "rollout.kubectl-ocm.io/health-condition"
	// PausedAnnotation "true" starts no cluster: those already started keep
	// their version. `kubectl ocm work rollout pause|resume` sets it.
	PausedAnnotation = "rollout.kubectl-ocm.io/paused"
	// AbortedAnnotation is the number of the revision whose rollout was
	// aborted: no further cluster is started while the set is at that
	// revision; a new template or an undo starts a new rollout.
	AbortedAnnotation = "rollout.kubectl-ocm.io/aborted"
	// UngatedAnnotation is the hash of a revision whose rollout passes every
	// gate: the rollback of an aborted rollout, which must not wait.
	UngatedAnnotation = "rollout.kubectl-ocm.io/ungated"
	// FailureStrategyAnnotation says what happens when a rollout's failures
	// pass its strategy's maxFailures: nothing more than OCM does (no
	// further cluster starts while they do) without it, Abort, or Rollback.
	FailureStrategyAnnotation = "rollout.kubectl-ocm.io/failure-strategy"
)

// FailureStrategy is a value of FailureStrategyAnnotation.
type FailureStrategy string

const (
	// FailureAbort aborts the rollout: it stays stopped even when the
	// failures recover, until a new template or an undo.
	FailureAbort FailureStrategy = "Abort"
	// FailureRollback aborts the rollout and rolls the set back to its
	// previous revision, which the changed clusters get without waiting at
	// any gate.
	FailureRollback FailureStrategy = "Rollback"
)

// FailureStrategies are the values FailureStrategyAnnotation accepts.
var FailureStrategies = []FailureStrategy{FailureAbort, FailureRollback}

// Reasons of the PlacementRolledOut condition of a ManifestWorkReplicaSet
// besides OCM's.
const (
	// ReasonAwaitingApproval: the rollout waits at a gate.
	ReasonAwaitingApproval = "AwaitingApproval"
	// ReasonPaused: the rollout is paused.
	ReasonPaused = "Paused"
	// ReasonAborted: the rollout of the current revision was aborted.
	ReasonAborted = "Aborted"
)

// Policy is the rollout control of a ManifestWorkReplicaSet, from its
// annotations.
type Policy struct {
	// Before and After are the gates of every stage.
	Before, After bool
	// StageSize is the number of clusters per stage; 0: one per group.
	StageSize int
	// HealthCondition is the condition type a cluster's manifests must
	// report True; "" for none.
	HealthCondition string
	// Paused starts no cluster.
	Paused bool
	// Aborted is the number of the aborted revision, 0 for none.
	Aborted int64
	// Ungated is the hash of the revision that passes every gate.
	Ungated string
	// FailureStrategy is "" (as OCM), Abort or Rollback.
	FailureStrategy FailureStrategy
}

// Gated reports whether p has gates.
func (p Policy) Gated() bool { return p.Before || p.After }

// conditionType is the pattern of a condition type (metav1.Condition).
var conditionType = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`)

// PolicyOf reads the rollout control annotations; the error names every
// annotation whose value is refused and says what it accepts.
func PolicyOf(annotations map[string]string) (Policy, error) {
	var p Policy
	var errs []error
	bad := func(key, v, want string) {
		errs = append(errs, fmt.Errorf("annotation %s=%q: %s", key, v, want))
	}
	if v, ok := annotations[GatesAnnotation]; ok {
		for _, g := range strings.Split(v, ",") {
			switch GateType(strings.TrimSpace(g)) {
			case GateBefore:
				p.Before = true
			case GateAfter:
				p.After = true
			default:
				bad(GatesAnnotation, v, "must be Before, After or Before,After")
			}
		}
	}
	if v, ok := annotations[StageSizeAnnotation]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			bad(StageSizeAnnotation, v, "must be a whole number of clusters, 1 or more")
		}
		p.StageSize = max(n, 0)
	}
	if v, ok := annotations[HealthConditionAnnotation]; ok {
		if len(v) > 316 || !conditionType.MatchString(v) {
			bad(HealthConditionAnnotation, v, "must be a condition type, such as Healthy or example.com/Ready")
		}
		p.HealthCondition = v
	}
	if v, ok := annotations[PausedAnnotation]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			bad(PausedAnnotation, v, "must be true or false")
		}
		p.Paused = b
	}
	if v, ok := annotations[AbortedAnnotation]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			bad(AbortedAnnotation, v, "must be a revision number, 1 or more")
		}
		p.Aborted = max(n, 0)
	}
	p.Ungated = annotations[UngatedAnnotation]
	if v, ok := annotations[FailureStrategyAnnotation]; ok {
		if !slices.Contains(FailureStrategies, FailureStrategy(v)) {
			bad(FailureStrategyAnnotation, v, "must be Abort or Rollback")
		}
		p.FailureStrategy = FailureStrategy(v)
	}
	return p, errors.Join(errs...)
}
