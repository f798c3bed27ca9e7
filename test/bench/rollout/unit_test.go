package rollout

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/require"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// The unit tests cover the benchmarks' own bookkeeping and predicates; they
// start no control planes and run under plain `go test` and -short.

// work is a ManifestWork of cluster at generation gen written from the
// revision of hash, with its Applied condition at appliedGen (0: none).
func work(cluster, hash string, gen, appliedGen int64) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "web", Generation: gen,
		Annotations: map[string]string{revision.HashAnnotation: hash}}}
	if appliedGen > 0 {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue,
			Reason: workv1.WorkAppliedReasonComplete, ObservedGeneration: appliedGen})
	}
	return w
}

func TestRevisionTimes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := &revisionTimes{}
	r.observe(work("c1", "h2", 2, 2), at(0)) // before any target: ignored
	r.target("h2")
	r.observe(work("c1", "h1", 1, 1), at(10)) // another revision: ignored
	r.observe(work("c1", "h2", 2, 1), at(20)) // updated, Applied only at the old generation
	r.observe(work("c1", "h2", 2, 2), at(30)) // Applied
	r.observe(work("c1", "h2", 2, 2), at(40)) // again: the first times stay
	r.observe(work("c2", "h2", 3, 3), at(50)) // updated and Applied at once
	gone := work("c3", "h2", 2, 2)
	gone.DeletionTimestamp = &metav1.Time{Time: t0}
	r.observe(gone, at(60)) // being deleted: ignored

	updated, applied := r.snapshot()
	want := map[string][2]time.Time{"c1": {at(20), at(30)}, "c2": {at(50), at(50)}}
	if len(updated) != len(want) || len(applied) != len(want) {
		t.Fatalf("updated %v, applied %v; want clusters c1, c2", updated, applied)
	}
	for c, w := range want {
		if !updated[c].Equal(w[0]) || !applied[c].Equal(w[1]) {
			t.Errorf("%s: updated %v, applied %v; want %v, %v", c, updated[c], applied[c], w[0], w[1])
		}
	}
	if got := r.countApplied([]string{"c1", "c2", "c3"}); got != 2 {
		t.Errorf("countApplied = %d, want 2", got)
	}
	r.target("h1")
	if got := r.countApplied([]string{"c1", "c2"}); got != 0 {
		t.Errorf("countApplied after a new target = %d, want 0", got)
	}
}

func TestSpreadOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := map[string]time.Time{"a": t0.Add(3 * time.Second), "b": t0.Add(time.Second), "c": t0.Add(2 * time.Second)}
	tests := []struct {
		name     string
		clusters []string
		want     spread
		err      string
	}{
		{name: "all", clusters: []string{"a", "b", "c"}, want: spread{first: time.Second, last: 3 * time.Second}},
		{name: "one", clusters: []string{"c"}, want: spread{first: 2 * time.Second, last: 2 * time.Second}},
		{name: "missing", clusters: []string{"a", "z", "y"}, err: "no time for 2 of 3 clusters: [y z]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spreadOf(t0, tt.clusters, at)
			switch {
			case tt.err != "":
				if err == nil || err.Error() != tt.err {
					t.Errorf("spreadOf = %v, %v; want error %q", got, err, tt.err)
				}
			case err != nil || got != tt.want:
				t.Errorf("spreadOf = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestReportTimes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	probe := func(cluster string, gen, reportedGen int64) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "app-diff-x", Generation: gen}}
		if reportedGen > 0 {
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkDiffReported, Status: metav1.ConditionTrue,
				Reason: workv1.DiffReasonDiffers, ObservedGeneration: reportedGen})
		}
		return w
	}
	r := &reportTimes{}
	r.observe(probe("c1", 1, 0), t0)
	r.observe(probe("c2", 1, 0), t0.Add(100*time.Millisecond))
	r.observe(probe("c1", 1, 1), t0.Add(300*time.Millisecond))
	r.observe(probe("c2", 2, 1), t0.Add(400*time.Millisecond)) // a report of an older generation
	_, _, err := r.latencies([]string{"c1", "c2"})
	require.ErrorContains(t, err, "1 of 2 clusters: [c2]")
	r.observe(probe("c2", 2, 2), t0.Add(600*time.Millisecond))
	r.observe(probe("c2", 2, 2), t0.Add(900*time.Millisecond)) // again: the first time stays
	lat, last, err := r.latencies([]string{"c1", "c2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 2 || lat[0] != 0.3 || lat[1] != 0.5 {
		t.Errorf("latencies = %v, want [0.3 0.5]", lat)
	}
	if !last.Equal(t0.Add(600 * time.Millisecond)) {
		t.Errorf("last report at %v, want %v", last, t0.Add(600*time.Millisecond))
	}
	if got := r.lastCreated(); !got.Equal(t0.Add(100 * time.Millisecond)) {
		t.Errorf("lastCreated = %v, want %v", got, t0.Add(100*time.Millisecond))
	}

	if _, _, ok := r.deletions(); ok {
		t.Error("deletions before any work was deleted: ok, want none")
	}
	for i, c := range []string{"c2", "c1", "c2"} {
		w := probe(c, 2, 2)
		w.DeletionTimestamp = &metav1.Time{Time: t0}
		r.observe(w, t0.Add(time.Duration(1000+100*i)*time.Millisecond))
	}
	first, lastDel, ok := r.deletions()
	if !ok || !first.Equal(t0.Add(time.Second)) || !lastDel.Equal(t0.Add(1100*time.Millisecond)) {
		t.Errorf("deletions = %v, %v, %t; want 1 s and 1.1 s after the start", first.Sub(t0), lastDel.Sub(t0), ok)
	}
}

func TestFirstSeen(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := &firstSeen{}
	if _, ok := s.get("a"); ok {
		t.Fatal("get of an unseen key: ok")
	}
	s.mark("a", t0.Add(time.Second))
	s.mark("a", t0.Add(2*time.Second))
	if got, ok := s.get("a"); !ok || !got.Equal(t0.Add(time.Second)) {
		t.Errorf("get = %v, %t; want the first mark", got, ok)
	}
}

func TestSetPredicates(t *testing.T) {
	set := func(reason, msg string, observed int64, total, applied int) *workv1alpha1.ManifestWorkReplicaSet {
		s := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		status := metav1.ConditionFalse
		if reason == workv1alpha1.ReasonComplete {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut,
			Status: status, Reason: reason, Message: msg, ObservedGeneration: observed})
		s.Status.Summary.Total, s.Status.Summary.Applied = total, applied
		return s
	}
	waitMsg := "placement all waits for approval before stage batch-2 of revision 2: approve it with `kubectl ocm work rollout approve`"
	tests := []struct {
		name     string
		set      *workv1alpha1.ManifestWorkReplicaSet
		complete bool
		waiting  bool
	}{
		{name: "complete", set: set(workv1alpha1.ReasonComplete, "", 2, 4, 4), complete: true},
		{name: "complete, summary behind", set: set(workv1alpha1.ReasonComplete, "", 2, 4, 3)},
		{name: "complete at an older generation", set: set(workv1alpha1.ReasonComplete, "", 1, 4, 4)},
		{name: "waiting at batch-2", set: set(rolloutv1alpha1.ReasonAwaitingApproval, waitMsg, 2, 4, 2), waiting: true},
		{name: "waiting at batch-2 of revision 1", set: set(rolloutv1alpha1.ReasonAwaitingApproval, strings.Replace(waitMsg, "revision 2", "revision 1", 1), 2, 4, 2)},
		{name: "waiting at batch-20", set: set(rolloutv1alpha1.ReasonAwaitingApproval, strings.Replace(waitMsg, "batch-2 ", "batch-20 ", 1), 2, 4, 2)},
		{name: "progressing", set: set(workv1alpha1.ReasonProgressing, "", 2, 4, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rolledOut(tt.set, 4); got != tt.complete {
				t.Errorf("rolledOut = %t, want %t", got, tt.complete)
			}
			if got := awaiting("batch-2", 2)(tt.set); got != tt.waiting {
				t.Errorf("awaiting batch-2 of revision 2 = %t, want %t", got, tt.waiting)
			}
		})
	}
}

func TestClusterNames(t *testing.T) {
	got := clusterNames(3)
	if strings.Join(got, ",") != "sim-0001,sim-0002,sim-0003" {
		t.Errorf("clusterNames(3) = %v", got)
	}
}

// TestRevisionHashOfTemplate checks that a set's revision hash follows its
// template only: the hash the benchmarks predict before a write is the one
// the hub records.
func TestRevisionHashOfTemplate(t *testing.T) {
	a := newSet("web", workv1alpha1.LocalPlacementReference{}.RolloutStrategy, nil, configMap("default", "web", "v1"))
	b := a.DeepCopy()
	b.Annotations = map[string]string{rolloutv1alpha1.GatesAnnotation: "Before"}
	c := newSet("web", workv1alpha1.LocalPlacementReference{}.RolloutStrategy, nil, configMap("default", "web", "v2"))
	hash := func(s *workv1alpha1.ManifestWorkReplicaSet) string {
		_, h, err := revision.Of(s).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if hash(a) != hash(b) {
		t.Error("a rollout annotation changed the revision hash")
	}
	if hash(a) == hash(c) {
		t.Error("a new template kept the revision hash")
	}
}
