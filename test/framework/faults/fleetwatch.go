package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// FleetWatch records, from polls of a hub, every state other than Available
// its managed clusters were seen in and every renewal of their leases: what
// a test of a disruption (a CA rotation, a hub restart) asserts was never
// visible. Each poll uses a fresh admin client, so it follows the hub's CAs
// through a rotation.
type FleetWatch struct {
	mu       sync.Mutex
	renewals map[string][]time.Time
	notAvail []string
	failed   int
}

// WatchFleet polls hub's ManagedClusters named clusters and their Leases
// every interval until tb ends.
func WatchFleet(tb testing.TB, hub *framework.Cluster, clusters []string, interval time.Duration) *FleetWatch {
	w := &FleetWatch{renewals: map[string][]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			w.poll(ctx, hub.Client(), clusters)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return w
}

func (w *FleetWatch) poll(ctx context.Context, c client.Client, clusters []string) {
	for _, name := range clusters {
		mc := &clusterv1.ManagedCluster{}
		lease := &coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, mc)
		if err == nil {
			err = c.Get(ctx, client.ObjectKey{Namespace: name, Name: clusterv1.LeaseName}, lease)
		}
		w.mu.Lock()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				w.failed++
			}
		default:
			if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond == nil || cond.Status != metav1.ConditionTrue {
				seen := fmt.Sprintf("%s: %v", name, cond)
				if !slices.Contains(w.notAvail, seen) {
					w.notAvail = append(w.notAvail, seen)
				}
			}
			if lease.Spec.RenewTime != nil {
				r := w.renewals[name]
				if at := lease.Spec.RenewTime.Time; len(r) == 0 || at.After(r[len(r)-1]) {
					w.renewals[name] = append(r, at)
				}
			}
		}
		w.mu.Unlock()
	}
}

// RenewedAfter reports whether every watched cluster renewed its lease
// after since, and if not which one did not.
func (w *FleetWatch) RenewedAfter(since time.Time) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, r := range w.renewals {
		if len(r) == 0 || !r[len(r)-1].After(since) {
			return false, fmt.Errorf("%s last renewed its lease before %s", name, since.Format(time.TimeOnly))
		}
	}
	return len(w.renewals) > 0, nil
}

// NotAvailable returns each distinct Available condition other than True
// seen, as "<cluster>: <condition>".
func (w *FleetWatch) NotAvailable() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.notAvail)
}

// LargestGap returns the largest time between two lease renewals of one
// cluster, and that cluster.
func (w *FleetWatch) LargestGap() (time.Duration, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var gap time.Duration
	var of string
	for name, r := range w.renewals {
		for i := 1; i < len(r); i++ {
			if d := r[i].Sub(r[i-1]); d > gap {
				gap, of = d, name
			}
		}
	}
	return gap, of
}

// Renewals returns how many lease renewals of each cluster were seen.
func (w *FleetWatch) Renewals() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for name, r := range w.renewals {
		out[name] = len(r)
	}
	return out
}

// FailedPolls returns how many polls failed (the hub's API server down).
func (w *FleetWatch) FailedPolls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}
