package scale

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stackSample is a stack (leaf first) and its CPU nanoseconds.
type stackSample struct {
	ns    int64
	stack []string
}

// cpuProfile builds a CPU profile of duration seconds with samples.
func cpuProfile(t *testing.T, seconds int64, samples []stackSample) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		DurationNanos: seconds * 1e9,
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        1e7,
	}
	fns := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	for _, ss := range samples {
		s := &profile.Sample{Value: []int64{ss.ns / 1e7, ss.ns}}
		for _, name := range ss.stack {
			if locs[name] == nil {
				fns[name] = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				locs[name] = &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: fns[name]}}}
				p.Function = append(p.Function, fns[name])
				p.Location = append(p.Location, locs[name])
			}
			s.Location = append(s.Location, locs[name])
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	require.NoError(t, p.Write(&buf))
	return buf.Bytes()
}

func TestSummarizeCPUProfile(t *testing.T) {
	data := cpuProfile(t, 10, []stackSample{
		// 6 s in RBAC under a request handler that also writes to etcd
		// elsewhere: authorization comes first.
		{6e9, []string{"k8s.io/kubernetes/pkg/registry/rbac/validation.appliesToUser", "k8s.io/kubernetes/pkg/registry/rbac/validation.(*DefaultRuleResolver).VisitRulesFor",
			"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac.(*RBACAuthorizer).Authorize", "k8s.io/apiserver/pkg/endpoints/filters.withAuthorization.func1"}},
		{2e9, []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}},
		{1e9, []string{"k8s.io/apiserver/pkg/storage/etcd3.(*store).GuaranteedUpdate", "net/http.HandlerFunc.ServeHTTP"}},
		{1e9, []string{"encoding/json.Marshal", "net/http.HandlerFunc.ServeHTTP"}},
	})
	got, err := SummarizeCPUProfile(data, "idle.pb.gz")
	require.NoError(t, err)
	assert.Equal(t, "idle.pb.gz", got.File)
	assert.InDelta(t, 10, got.Seconds, 1e-9)
	assert.InDelta(t, 1, got.Cores, 1e-9)
	assert.InDelta(t, 0.6, got.Shares[ShareAuthorization], 1e-9)
	assert.InDelta(t, 0.2, got.Shares[ShareGC], 1e-9)
	assert.InDelta(t, 0.1, got.Shares[ShareStorage], 1e-9)
	assert.InDelta(t, 0.1, got.Shares[ShareOther], 1e-9)
	assert.NotContains(t, got.Shares, ShareAdmission)
	require.NotEmpty(t, got.Top)
	assert.Equal(t, "k8s.io/kubernetes/pkg/registry/rbac/validation.appliesToUser 60.0%", got.Top[0])
	assert.Equal(t, "1.00 cores sampled over 10 s: authorization 60%, garbage collection 20%, other 10%, storage 10% (idle.pb.gz)", got.Summary())
}

func TestSummarizeCPUProfileRejects(t *testing.T) {
	_, err := SummarizeCPUProfile([]byte("not a profile"), "x.pb.gz")
	require.ErrorContains(t, err, "parse CPU profile x.pb.gz")

	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	var buf bytes.Buffer
	require.NoError(t, p.Write(&buf))
	_, err = SummarizeCPUProfile(buf.Bytes(), "heap.pb.gz")
	require.ErrorContains(t, err, "heap.pb.gz is not a CPU profile")
}
