package rollout

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// revisionTimes records, for one revision of a ManifestWorkReplicaSet, when
// a watch of the set's works first delivered each cluster's work written
// from that revision (updated) and first delivered it Applied at its
// generation (applied). Works of other revisions are ignored.
type revisionTimes struct {
	mu      sync.Mutex
	hash    string
	updated map[string]time.Time
	applied map[string]time.Time
}

// target forgets every time recorded and records from now on the works
// written from the revision of hash.
func (r *revisionTimes) target(hash string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hash = hash
	r.updated, r.applied = map[string]time.Time{}, map[string]time.Time{}
}

// observe records what the delivery of w at at says.
func (r *revisionTimes) observe(w *workv1.ManifestWork, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hash == "" || w.Annotations[revision.HashAnnotation] != r.hash || !w.DeletionTimestamp.IsZero() {
		return
	}
	if _, ok := r.updated[w.Namespace]; !ok {
		r.updated[w.Namespace] = at
	}
	if _, ok := r.applied[w.Namespace]; !ok && workApplied(w) {
		r.applied[w.Namespace] = at
	}
}

// snapshot returns copies of the times recorded so far.
func (r *revisionTimes) snapshot() (updated, applied map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	updated, applied = make(map[string]time.Time, len(r.updated)), make(map[string]time.Time, len(r.applied))
	for k, v := range r.updated {
		updated[k] = v
	}
	for k, v := range r.applied {
		applied[k] = v
	}
	return updated, applied
}

// countApplied counts the clusters of clusters whose work was seen Applied.
func (r *revisionTimes) countApplied(clusters []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range clusters {
		if _, ok := r.applied[c]; ok {
			n++
		}
	}
	return n
}

// workApplied reports whether w is Applied at its generation.
func workApplied(w *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
}

// spread is, for a group of clusters and a start, how long until the first
// of them and the last of them reached a state.
type spread struct {
	first, last time.Duration
}

// spreadOf returns the spread from start of at's times for clusters; an
// error names the clusters at has no time for.
func spreadOf(start time.Time, clusters []string, at map[string]time.Time) (spread, error) {
	var s spread
	var missing []string
	seen := false
	for _, c := range clusters {
		t, ok := at[c]
		if !ok {
			missing = append(missing, c)
			continue
		}
		d := t.Sub(start)
		if !seen || d < s.first {
			s.first = d
		}
		if !seen || d > s.last {
			s.last = d
		}
		seen = true
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return spread{}, fmt.Errorf("no time for %d of %d clusters: %v", len(missing), len(clusters), missing)
	}
	return s, nil
}

// firstSeen records when a watch first delivered each of a set of
// objects, by key.
type firstSeen struct {
	mu sync.Mutex
	at map[string]time.Time
}

// mark records key seen at at, unless it was seen before.
func (s *firstSeen) mark(key string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	if _, ok := s.at[key]; !ok {
		s.at[key] = at
	}
}

// get returns when key was first seen.
func (s *firstSeen) get(key string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[key]
	return t, ok
}

// stageResult is what one gated stage measured, from its approval.
type stageResult struct {
	// name is the stage's name; clusters how many it has.
	name     string
	clusters int
	// approve is how long `kubectl ocm work rollout approve` ran.
	approve time.Duration
	// updated and applied are the spreads, from the approval's creation
	// (a hub watch delivering it), of the stage's works updated on the hub
	// and Applied (the same watch delivering them so).
	updated, applied spread
	// waiting is from the stage's last work Applied to the set reporting
	// the rollout waiting at the next gate (or Complete after the last).
	waiting time.Duration
}

// reportTimes records, for the ReportDiff works of one `kubectl ocm work
// diff`, when a watch first delivered each cluster's work (created), first
// delivered it with its DiffReported condition at its generation
// (reported), and first delivered it being deleted (deleted).
type reportTimes struct {
	mu       sync.Mutex
	created  map[string]time.Time
	reported map[string]time.Time
	deleted  map[string]time.Time
}

// observe records what the delivery of w at at says.
func (r *reportTimes) observe(w *workv1.ManifestWork, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.created == nil {
		r.created, r.reported, r.deleted = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	}
	if _, ok := r.created[w.Namespace]; !ok {
		r.created[w.Namespace] = at
	}
	if _, ok := r.reported[w.Namespace]; !ok && diffReported(w) {
		r.reported[w.Namespace] = at
	}
	if _, ok := r.deleted[w.Namespace]; !ok && !w.DeletionTimestamp.IsZero() {
		r.deleted[w.Namespace] = at
	}
}

// deletions returns when the first and the last work were seen being
// deleted; false when none was.
func (r *reportTimes) deletions() (first, last time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.deleted {
		if !ok || t.Before(first) {
			first = t
		}
		if !ok || t.After(last) {
			last = t
		}
		ok = true
	}
	return first, last, ok
}

// latencies returns each cluster's report latency in seconds (created →
// reported), in cluster order, and the last report; an error names the
// clusters without a report.
func (r *reportTimes) latencies(clusters []string) (lat []float64, last time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var missing []string
	for _, c := range clusters {
		created, okC := r.created[c]
		reported, okR := r.reported[c]
		if !okC || !okR {
			missing = append(missing, c)
			continue
		}
		lat = append(lat, reported.Sub(created).Seconds())
		if reported.After(last) {
			last = reported
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, time.Time{}, fmt.Errorf("no report seen from %d of %d clusters: %v", len(missing), len(clusters), missing)
	}
	return lat, last, nil
}

// lastCreated returns when the last work was first seen.
func (r *reportTimes) lastCreated() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last time.Time
	for _, t := range r.created {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// diffReported reports whether the agent reported the diff of w's
// generation, as `kubectl ocm work diff` waits for it.
func diffReported(w *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDiffReported)
	return c != nil && c.ObservedGeneration == w.Generation && w.Generation > 0
}
