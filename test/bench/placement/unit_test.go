package placement

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// The unit tests cover the harness's own bookkeeping; they start no control
// planes and run under plain `go test` and -short.

func TestTally(t *testing.T) {
	dec := func(name, placement string, n int) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{clusterv1beta1.PlacementLabel: placement},
		}}
		for i := 0; i < n; i++ {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: fmt.Sprint("c", i)})
		}
		return d
	}
	tests := []struct {
		name         string
		typ          watch.EventType
		d            *clusterv1beta1.PlacementDecision
		wantComplete int
		wantWrites   int
	}{
		{"created empty", watch.Added, dec("p1-decision-1", "p1", 0), 0, 1},
		{"status written", watch.Modified, dec("p1-decision-1", "p1", 10), 1, 2},
		{"second placement, partly", watch.Added, dec("p2-decision-1", "p2", 4), 1, 3},
		{"second page completes it", watch.Added, dec("p2-decision-2", "p2", 6), 2, 4},
		{"rewrite keeps the count", watch.Modified, dec("p1-decision-1", "p1", 10), 2, 5},
		{"deleted page", watch.Deleted, dec("p2-decision-2", "p2", 6), 1, 5},
	}
	tl := newTally()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl.apply(tt.typ, tt.d)
			if got := tl.complete(10); got != tt.wantComplete {
				t.Errorf("complete(10) = %d, want %d", got, tt.wantComplete)
			}
			if tl.writes != tt.wantWrites {
				t.Errorf("writes = %d, want %d", tl.writes, tt.wantWrites)
			}
		})
	}
}

func TestParallel(t *testing.T) {
	seen := make([]bool, 3*max(1, *concurrency))
	err := parallel(len(seen), func(i int) error {
		seen[i] = true
		if i == 1 {
			return fmt.Errorf("cluster %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "cluster 1" {
		t.Errorf("err = %v, want cluster 1", err)
	}
	if slices.Contains(seen, false) {
		t.Error("not every index was run after an error")
	}
}
