package placement

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// tally counts the decided clusters of every placement of a namespace from
// PlacementDecision watch events.
type tally struct {
	// byDecision is the placement and decision count of each PlacementDecision.
	byDecision map[string]decisionCount
	// perPlacement is the sum of the decisions of each placement.
	perPlacement map[string]int
	// writes counts the ADDED and MODIFIED events seen.
	writes int
}

// decisionCount is what one PlacementDecision contributes.
type decisionCount struct {
	placement string
	clusters  int
}

// newTally returns an empty tally.
func newTally() *tally {
	return &tally{byDecision: map[string]decisionCount{}, perPlacement: map[string]int{}}
}

// apply accounts for one watch event of d.
func (t *tally) apply(typ watch.EventType, d *clusterv1beta1.PlacementDecision) {
	if old, ok := t.byDecision[d.Name]; ok {
		t.perPlacement[old.placement] -= old.clusters
		delete(t.byDecision, d.Name)
	}
	if typ == watch.Deleted {
		return
	}
	t.writes++
	n := 0
	for _, c := range d.Status.Decisions {
		if c.ClusterName != "" {
			n++
		}
	}
	dc := decisionCount{placement: d.Labels[clusterv1beta1.PlacementLabel], clusters: n}
	t.byDecision[d.Name] = dc
	t.perPlacement[dc.placement] += n
}

// complete reports how many placements decide exactly want clusters.
func (t *tally) complete(want int) int {
	done := 0
	for _, n := range t.perPlacement {
		if n == want {
			done++
		}
	}
	return done
}

// decisionWatch follows the PlacementDecisions of one namespace.
type decisionWatch struct {
	mu sync.Mutex
	t  *tally
	// first is when each placement's decisions first named a cluster (the
	// arrival of that watch event).
	first map[string]time.Time
	errs  chan error
	// changed is signaled after every event.
	changed chan struct{}
}

// watchDecisions starts watching the PlacementDecisions of ns until ctx ends.
func watchDecisions(ctx context.Context, w client.WithWatch, ns string) (*decisionWatch, error) {
	wi, err := w.Watch(ctx, &clusterv1beta1.PlacementDecisionList{}, client.InNamespace(ns))
	if err != nil {
		return nil, fmt.Errorf("watch PlacementDecisions in %s: %w", ns, err)
	}
	dw := &decisionWatch{t: newTally(), first: map[string]time.Time{}, errs: make(chan error, 1), changed: make(chan struct{}, 1)}
	go func() {
		defer wi.Stop()
		for ev := range wi.ResultChan() {
			d, ok := ev.Object.(*clusterv1beta1.PlacementDecision)
			if !ok {
				dw.errs <- fmt.Errorf("watch PlacementDecisions in %s: %v event %T", ns, ev.Type, ev.Object)
				return
			}
			at := time.Now()
			dw.mu.Lock()
			dw.t.apply(ev.Type, d)
			if p := d.Labels[clusterv1beta1.PlacementLabel]; dw.t.perPlacement[p] > 0 {
				if _, seen := dw.first[p]; !seen {
					dw.first[p] = at
				}
			}
			dw.mu.Unlock()
			select {
			case dw.changed <- struct{}{}:
			default:
			}
		}
	}()
	return dw, nil
}

// waitComplete waits until placements placements decide want clusters each
// and returns the moment the event that completed them arrived and the
// number of PlacementDecision writes seen so far.
func (dw *decisionWatch) waitComplete(ctx context.Context, placements, want int, timeout time.Duration) (time.Time, int, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		dw.mu.Lock()
		done, writes := dw.t.complete(want), dw.t.writes
		dw.mu.Unlock()
		if done >= placements {
			return time.Now(), writes, nil
		}
		select {
		case <-dw.changed:
		case err := <-dw.errs:
			return time.Time{}, writes, err
		case <-deadline.C:
			return time.Time{}, writes, fmt.Errorf("after %s only %d of %d placements decide %d clusters", timeout, done, placements, want)
		case <-ctx.Done():
			return time.Time{}, writes, ctx.Err()
		}
	}
}

// waitFirst waits until placements placements have had decisions naming a
// cluster and returns when each first had them.
func (dw *decisionWatch) waitFirst(ctx context.Context, placements int, timeout time.Duration) (map[string]time.Time, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		dw.mu.Lock()
		done := len(dw.first)
		dw.mu.Unlock()
		if done >= placements {
			dw.mu.Lock()
			defer dw.mu.Unlock()
			return maps.Clone(dw.first), nil
		}
		select {
		case <-dw.changed:
		case err := <-dw.errs:
			return nil, err
		case <-deadline.C:
			return nil, fmt.Errorf("after %s only %d of %d placements have decisions", timeout, done, placements)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
