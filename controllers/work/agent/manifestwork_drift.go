package agent

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// drift is a change made on the managed cluster to an object a manifest
// applied.
type drift struct {
	// meta identifies the manifest.
	meta workv1.ManifestResourceMeta
	// reason is workv1.DriftReasonModified or workv1.DriftReasonDeleted.
	reason string
	// fields are the paths that no longer matched the manifest.
	fields []string
	// restored says whether the agent put the object back.
	restored bool
	// strategy is the manifest's update strategy.
	strategy workv1.UpdateStrategyType
	// at is when the agent found the drift.
	at time.Time
}

// message describes the drift for the Drifted condition and the Event.
func (d *drift) message() string {
	what := fmt.Sprintf("%s %s", d.meta.Kind, d.meta.Name)
	if d.meta.Namespace != "" {
		what = fmt.Sprintf("%s %s/%s", d.meta.Kind, d.meta.Namespace, d.meta.Name)
	}
	var b strings.Builder
	b.WriteString(what)
	if d.reason == workv1.DriftReasonDeleted {
		b.WriteString(" was deleted on the managed cluster")
	} else {
		b.WriteString(" was modified on the managed cluster")
	}
	fmt.Fprintf(&b, " at %s", d.at.UTC().Format(time.RFC3339))
	if len(d.fields) > 0 {
		fields := d.fields
		if len(fields) > 10 {
			fields = append(fields[:10:10], fmt.Sprintf("and %d more", len(d.fields)-10))
		}
		fmt.Fprintf(&b, " (changed: %s)", strings.Join(fields, ", "))
	}
	switch {
	case d.restored && d.reason == workv1.DriftReasonDeleted:
		b.WriteString("; created again")
	case d.restored:
		b.WriteString("; restored")
	default:
		fmt.Fprintf(&b, "; not restored (update strategy %s)", d.strategy)
	}
	return b.String()
}

// driftDetector finds drift in the apply results of a work. Objects the
// agent writes (Update, ServerSideApply) drifted when an apply at an
// unchanged generation had to write them again; objects it does not write
// (CreateOnly, ReadOnly) drifted when their content changed since the
// previous look and no longer matches the manifest.
type driftDetector struct {
	mu sync.Mutex
	// seen are the fingerprints of the objects of CreateOnly and ReadOnly
	// manifests at the previous look, by work, manifest and object UID.
	seen map[driftKey]string
	// unwritten are the drifts found but not yet in a status the hub
	// stored, by work: a status patch that fails (a conflict, the hub
	// unreachable) must not lose them, since the next apply finds the
	// objects already restored.
	unwritten map[types.NamespacedName][]drift
}

// driftKey identifies an object of one manifest of one work.
type driftKey struct {
	work types.NamespacedName
	meta workv1.ManifestResourceMeta
	uid  types.UID
}

// newDriftDetector returns an empty detector.
func newDriftDetector() *driftDetector {
	return &driftDetector{seen: map[driftKey]string{}, unwritten: map[types.NamespacedName][]drift{}}
}

// carry returns the drifts of work to record in its status: those found now
// and those found before whose record the hub has not stored yet (a drift
// found now replaces an older one of the same manifest). Until written
// confirms them, they are carried to the next reconcile.
func (dd *driftDetector) carry(work types.NamespacedName, found []drift) []drift {
	if dd == nil {
		return found
	}
	dd.mu.Lock()
	defer dd.mu.Unlock()
	out := slices.Clone(found)
	for _, old := range dd.unwritten[work] {
		if !slices.ContainsFunc(found, func(d drift) bool { return d.meta == old.meta }) {
			out = append(out, old)
		}
	}
	if len(out) == 0 {
		delete(dd.unwritten, work)
	} else {
		dd.unwritten[work] = out
	}
	return out
}

// written drops the carried drifts whose Drifted condition the stored
// status of work holds.
func (dd *driftDetector) written(work *workv1.ManifestWork) {
	if dd == nil {
		return
	}
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	dd.mu.Lock()
	defer dd.mu.Unlock()
	left := slices.DeleteFunc(dd.unwritten[key], func(d drift) bool {
		mc := findManifest(work.Status.ResourceStatus.Manifests, d.meta)
		if mc == nil {
			return false
		}
		c := meta.FindStatusCondition(mc.Conditions, workv1.ManifestDrifted)
		return c != nil && c.Reason == d.reason && c.LastTransitionTime.Equal(&metav1.Time{Time: d.at.Truncate(time.Second)})
	})
	if len(left) == 0 {
		delete(dd.unwritten, key)
	} else {
		dd.unwritten[key] = left
	}
}

// detect returns the drift of one manifest's apply, found right after it,
// while the manifest and the object as the apply found it are at hand.
// prev is the work's status before the reconcile; only manifests that were
// applied, and whose object existed, at the work's current generation can
// drift.
func (dd *driftDetector) detect(work *workv1.ManifestWork, prev []workv1.ManifestCondition, res *apply.Result, manifest *unstructured.Unstructured, now time.Time) (drift, bool) {
	if dd == nil || res.Frozen || res.GVR.Resource == "" || manifest == nil {
		return drift{}, false
	}
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	d := drift{meta: res.Meta, strategy: res.Strategy, at: now}
	baseline := appliedAt(prev, res.Meta, work.Generation)
	switch res.Strategy {
	case workv1.UpdateStrategyTypeUpdate, workv1.UpdateStrategyTypeServerSideApply, workv1.UpdateStrategyTypeCreateOnly:
		switch {
		case !baseline || res.Err != nil:
		case res.Change == apply.ChangeCreated:
			d.reason, d.restored = workv1.DriftReasonDeleted, true
		case res.Change == apply.ChangeUpdated:
			d.reason, d.restored = workv1.DriftReasonModified, true
			d.fields = apply.Differences(manifest, res.Before)
		}
	case workv1.UpdateStrategyTypeReadOnly:
		if baseline && res.Object == nil {
			d.reason = workv1.DriftReasonDeleted
		}
	}
	if res.Strategy == workv1.UpdateStrategyTypeCreateOnly || res.Strategy == workv1.UpdateStrategyTypeReadOnly {
		if d.reason == "" && res.Object != nil {
			dd.mu.Lock()
			d.reason, d.fields = dd.edited(driftKey{work: key, meta: res.Meta, uid: res.Object.GetUID()}, manifest, res.Object)
			dd.mu.Unlock()
		}
	}
	return d, d.reason != ""
}

// edited reports an object the agent does not write as modified when its
// content changed since the previous look and it no longer matches the
// manifest. The first look only records it. Call with mu held.
func (dd *driftDetector) edited(k driftKey, manifest, live *unstructured.Unstructured) (string, []string) {
	fp := apply.Fingerprint(live)
	last, seen := dd.seen[k]
	dd.seen[k] = fp
	if !seen || last == fp {
		return "", nil
	}
	diffs := apply.Differences(manifest, live)
	if len(diffs) == 0 {
		return "", nil
	}
	return workv1.DriftReasonModified, diffs
}

// forget drops what the detector remembers of a work.
func (dd *driftDetector) forget(work types.NamespacedName) {
	if dd == nil {
		return
	}
	dd.mu.Lock()
	defer dd.mu.Unlock()
	for k := range dd.seen {
		if k.work == work {
			delete(dd.seen, k)
		}
	}
	delete(dd.unwritten, work)
}

// appliedAt reports whether the previous status says the manifest was
// applied at generation gen and its object existed.
func appliedAt(prev []workv1.ManifestCondition, m workv1.ManifestResourceMeta, gen int64) bool {
	old := findManifest(prev, m)
	if old == nil {
		return false
	}
	applied := meta.FindStatusCondition(old.Conditions, workv1.ManifestApplied)
	return applied != nil && applied.Status == metav1.ConditionTrue && applied.ObservedGeneration == gen &&
		meta.IsStatusConditionTrue(old.Conditions, workv1.ManifestAvailable)
}

// recordDrifts sets the Drifted condition of each drifted manifest (its
// last transition time is the time of the drift).
func (r *workReconciler) recordDrifts(work *workv1.ManifestWork, drifts []drift) {
	for _, d := range drifts {
		msg := d.message()
		for i := range work.Status.ResourceStatus.Manifests {
			mc := &work.Status.ResourceStatus.Manifests[i]
			if mc.ResourceMeta != d.meta {
				continue
			}
			meta.RemoveStatusCondition(&mc.Conditions, workv1.ManifestDrifted)
			meta.SetStatusCondition(&mc.Conditions, metav1.Condition{
				Type: workv1.ManifestDrifted, Status: metav1.ConditionTrue, ObservedGeneration: work.Generation,
				Reason: d.reason, Message: msg, LastTransitionTime: metav1.NewTime(d.at),
			})
		}
	}
}
