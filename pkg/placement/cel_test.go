package placement

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

func TestCELLibrary(t *testing.T) {
	item := func(name string, v int32) clusterv1alpha1.AddOnPlacementScoreItem {
		return clusterv1alpha1.AddOnPlacementScoreItem{Name: name, Value: v}
	}
	future := now.Add(time.Hour)
	in := defaultInput(clusterv1beta1.PlacementSpec{},
		newCluster("a").label("env", "prod").label("info", `{"tier":"gold"}`).alloc("4", "8Gi").build(),
		newCluster("b").label("env", "dev").alloc("2", "4Gi").build(),
		newCluster("c").label("env", "dev").build())
	in.Scores = []*clusterv1alpha1.AddOnPlacementScore{
		score("a", "usage", &future, item("cpu", 80), item("memory", 20)),
		score("b", "usage", nil, item("cpu", 30)),
	}
	tests := []struct {
		name   string
		exprs  []string
		want   []string
		reason map[string]string
	}{
		{name: "scores", exprs: []string{`managedCluster.scores("usage").exists(s, s.name == "cpu" && s.value > 50)`},
			want: []string{"a"}, reason: map[string]string{"c": `AddOnPlacementScore "usage" not found`}},
		{name: "scores filter size", exprs: []string{`managedCluster.scores("usage").filter(s, s.value >= 20).size() == 2`},
			want: []string{"a"}},
		{name: "labels in list", exprs: []string{`managedCluster.metadata.labels.env in ["dev", "test"]`},
			want: []string{"b", "c"}},
		{name: "has on status", exprs: []string{`has(managedCluster.status.allocatable)`}, want: []string{"a", "b"}},
		{name: "quantity strings", exprs: []string{`managedCluster.status.allocatable.cpu == "4"`}, want: []string{"a"}},
		{name: "parseJSON", exprs: []string{`"info" in managedCluster.metadata.labels && parseJSON(managedCluster.metadata.labels.info).tier == "gold"`},
			want: []string{"a"}},
		{name: "strings extension", exprs: []string{`managedCluster.metadata.labels.env.upperAscii() == "DEV"`},
			want: []string{"b", "c"}},
		{name: "lists extension", exprs: []string{`[3, 1, 2].sort()[0] == 1 && managedCluster.metadata.name == "c"`},
			want: []string{"c"}},
	}
	s := NewScheduler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Placement = placement(clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{celPredicate(tt.exprs...)}})
			res := s.Schedule(in)
			if res.Misconfigured.Status != "False" {
				t.Fatalf("misconfigured: %s", res.Misconfigured.Message)
			}
			if got := sortedSelected(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selected = %v, want %v; %+v", got, tt.want, res.Clusters)
			}
			for name, r := range tt.reason {
				if e := explanation(t, res, name); !strings.Contains(e.Reason, r) {
					t.Errorf("%s: reason %q, want %q", name, e.Reason, r)
				}
			}
		})
	}
}

func TestCELCacheConcurrent(t *testing.T) {
	s := NewScheduler()
	const expr = `managedCluster.metadata.name.startsWith("a")`
	spec := clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{celPredicate(expr)}}
	var wg sync.WaitGroup
	results := make([][]string, 8)
	for k := range results {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			results[k] = sortedSelected(s.Schedule(defaultInput(spec, newCluster("a1").build(), newCluster("b1").build())))
		}(k)
	}
	wg.Wait()
	for k, got := range results {
		if !reflect.DeepEqual(got, []string{"a1"}) {
			t.Errorf("run %d selected %v", k, got)
		}
	}
	if n := s.cel.programs.Len(); n != 1 {
		t.Errorf("%d cached programs, want 1", n)
	}
	p1, _ := s.cel.program(expr)
	p2, _ := s.cel.program(expr)
	if p1 != p2 {
		t.Errorf("program compiled twice")
	}
}

func TestCELClusterConversionFollowsResourceVersion(t *testing.T) {
	s := NewScheduler()
	spec := clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		celPredicate(`managedCluster.metadata.labels["env"] == "prod"`)}}
	c := newCluster("a").label("env", "prod").build()
	c.ResourceVersion = "1"
	if got := sortedSelected(s.Schedule(defaultInput(spec, c))); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("selected %v, want [a]", got)
	}
	changed := newCluster("a").label("env", "dev").build()
	changed.ResourceVersion = "2"
	if got := sortedSelected(s.Schedule(defaultInput(spec, changed))); len(got) != 0 {
		t.Errorf("after a label change selected %v, want none", got)
	}
	// The same resourceVersion reuses the conversion, so a change without a
	// new resourceVersion (never made by the API server) is not seen.
	stale := newCluster("a").label("env", "prod").build()
	stale.ResourceVersion = "2"
	if got := sortedSelected(s.Schedule(defaultInput(spec, stale))); len(got) != 0 {
		t.Errorf("same resourceVersion selected %v, want the cached conversion (none)", got)
	}
}
