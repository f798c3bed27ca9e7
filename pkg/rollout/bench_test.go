package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkCompute decides a Progressive rollout of 5,000 clusters in 50
// groups, a fifth of them done, the rest to apply.
func BenchmarkCompute(b *testing.B) {
	var gs []Group
	states := map[string]ClusterState{}
	for g := 0; g < 50; g++ {
		grp := Group{Index: int32(g)}
		for c := 0; c < 100; c++ {
			name := fmt.Sprintf("cluster-%02d-%03d", g, c)
			grp.Clusters = append(grp.Clusters, name)
			if g < 10 {
				states[name] = st(Succeeded, time.Hour)
			}
		}
		gs = append(gs, grp)
	}
	in := Input{Strategy: progressive(intstr.FromString("10%"), i0, time.Minute, "10m"), Groups: gs, States: states, Now: now}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(in); err != nil {
			b.Fatal(err)
		}
	}
}
