package rollout

import (
	"time"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// builder accumulates a Result.
type builder struct {
	now      time.Time
	toApply  []Cluster
	started  map[string]bool
	breached bool
}

// keepActive adds the entries already in the rollout window: they keep the
// desired version whatever the strategy decides for the others.
func (b *builder) keepActive(es []entry) {
	for _, e := range es {
		if e.active {
			b.add(e)
		}
	}
}

// add puts e in ToApply once.
func (b *builder) add(e entry) {
	if b.started == nil {
		b.started = map[string]bool{}
	}
	if !b.started[e.Name] {
		b.started[e.Name] = true
		b.toApply = append(b.toApply, e.Cluster)
	}
}

// start adds up to n pending entries of es, in order, and returns how many
// it added.
func (b *builder) start(es []entry, n int) int {
	added := 0
	for _, e := range es {
		if added >= n {
			break
		}
		if e.pending {
			b.add(e)
			added++
		}
	}
	return added
}

// mandatory rolls the mandatory decision groups out first, one group at a
// time and tolerating no failure. It returns the entries of the other groups
// and whether the mandatory groups are done, so that the rest may start.
func (b *builder) mandatory(groups []Group, all [][]entry, mandatory []clusterv1alpha1.MandatoryDecisionGroup) (rest [][]entry, done bool) {
	isMandatory := func(g Group) bool {
		for _, m := range mandatory {
			if (m.GroupName != "" && m.GroupName == g.Name) || (m.GroupName == "" && m.GroupIndex == g.Index) {
				return true
			}
		}
		return false
	}
	done = true
	for i, g := range groups {
		if !isMandatory(g) {
			rest = append(rest, all[i])
			continue
		}
		if !done {
			continue
		}
		busy, failures := 0, 0
		for _, e := range all[i] {
			if e.failure {
				failures++
			}
			if e.active || e.pending {
				busy++
			}
		}
		b.start(all[i], len(all[i]))
		if failures > 0 {
			b.breached = true
		}
		if busy > 0 || failures > 0 {
			done = false
		}
	}
	return rest, done
}

// progressive keeps at most maxConcurrency of the clusters of rest in the
// rollout window, in group order, and starts none once failures exceed
// maxFailures (counted over total clusters).
func (b *builder) progressive(rest [][]entry, total int, s settings) error {
	n := 0
	for _, es := range rest {
		n += len(es)
	}
	flat := make([]entry, 0, n)
	for _, es := range rest {
		flat = append(flat, es...)
	}
	limit, err := size(s.maxConcurrency, len(flat), len(flat))
	if err != nil {
		return err
	}
	maxFailures, err := size(s.maxFailures, total, 0)
	if err != nil {
		return err
	}
	active, failures := 0, 0
	for _, e := range flat {
		if e.active {
			active++
		}
		if e.failure {
			failures++
		}
	}
	if failures > maxFailures {
		b.breached = true
		return nil
	}
	if free := limit - active; free > 0 {
		b.start(flat, free)
	}
	return nil
}

// perGroup rolls rest out one group at a time: a group starts only when
// every cluster of the groups before it succeeded (past minSuccessTime),
// was skipped, or failed within the group's maxFailures.
func (b *builder) perGroup(rest [][]entry, s settings) error {
	for _, es := range rest {
		maxFailures, err := size(s.maxFailures, len(es), 0)
		if err != nil {
			return err
		}
		failures, busy := 0, 0
		for _, e := range es {
			switch {
			case e.failure:
				failures++
			case e.active || e.pending:
				busy++
			}
		}
		if failures > maxFailures {
			b.breached = true
			return nil
		}
		b.start(es, len(es))
		if busy > 0 {
			return nil
		}
	}
	return nil
}

// result finishes the Result: time-outs, the requeue delay and completion.
func (b *builder) result(all [][]entry) Result {
	r := Result{ToApply: b.toApply, MaxFailuresBreached: b.breached, Complete: !b.breached}
	var next time.Time
	for _, es := range all {
		for _, e := range es {
			if e.State == TimeOut {
				r.TimedOut = append(r.TimedOut, e.Cluster)
			}
			if e.pending || e.active || e.failure || e.held {
				r.Complete = false
			}
			if e.held {
				r.Held++
			}
			if e.active && !e.recheck.IsZero() && (next.IsZero() || e.recheck.Before(next)) {
				next = e.recheck
			}
		}
	}
	if !next.IsZero() {
		r.RequeueAfter = next.Sub(b.now)
	}
	return r
}
