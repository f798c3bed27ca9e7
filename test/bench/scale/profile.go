package scale

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// What the hub's API server spends its CPU on, as CPUProfile.Shares names
// it: each sample counts for the first of these whose code is on its stack.
const (
	// ShareAuthorization is RBAC authorization: the rule resolver visits
	// every ClusterRoleBinding for each request it does not allow early.
	ShareAuthorization = "authorization"
	// ShareAdmission is admission (ValidatingAdmissionPolicies included).
	ShareAdmission = "admission"
	// ShareStorage is the etcd client and its encoding.
	ShareStorage = "storage"
	// ShareWatch is the watch cache and the watchers it feeds.
	ShareWatch = "watch"
	// ShareGC is the Go runtime's garbage collector.
	ShareGC = "garbage collection"
	// ShareOther is everything else.
	ShareOther = "other"
)

// shareFrames are the function-name prefixes of each share, in the order a
// sample is matched against them.
var shareFrames = []struct {
	share    string
	prefixes []string
}{
	{ShareAuthorization, []string{
		"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac.",
		"k8s.io/kubernetes/pkg/registry/rbac/validation.",
	}},
	{ShareAdmission, []string{"k8s.io/apiserver/pkg/admission"}},
	{ShareStorage, []string{"k8s.io/apiserver/pkg/storage/etcd3.", "go.etcd.io/etcd/client/"}},
	{ShareWatch, []string{"k8s.io/apiserver/pkg/storage/cacher."}},
	{ShareGC, []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcStart"}},
}

// CPUProfile summarizes a CPU profile of the hub's API server.
type CPUProfile struct {
	// File is the profile's name in the results directory (pprof format:
	// `go tool pprof <file>`).
	File string `json:"file"`
	// Seconds is how long it sampled; Cores the CPU it sampled divided by
	// that.
	Seconds float64 `json:"seconds"`
	Cores   float64 `json:"cores"`
	// Shares are the parts of the sampled CPU by what it was spent on (the
	// Share* names), summing to 1.
	Shares map[string]float64 `json:"shares"`
	// Top are the functions with the most CPU of their own, "name share".
	Top []string `json:"top,omitempty"`
}

// SummarizeCPUProfile reads a CPU profile in pprof format (what
// /debug/pprof/profile serves) and says where its CPU went.
func SummarizeCPUProfile(data []byte, file string) (CPUProfile, error) {
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		return CPUProfile{}, fmt.Errorf("parse CPU profile %s: %w", file, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return CPUProfile{}, fmt.Errorf("%s is not a CPU profile: no cpu sample type", file)
	}
	byShare := map[string]int64{}
	flat := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		byShare[shareOf(s)] += v
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 {
			flat[s.Location[0].Line[0].Function.Name] += v
		}
	}
	out := CPUProfile{File: file, Seconds: float64(p.DurationNanos) / 1e9, Shares: map[string]float64{}}
	if total == 0 {
		return out, nil
	}
	if out.Seconds > 0 {
		out.Cores = float64(total) / 1e9 / out.Seconds
	}
	for k, v := range byShare {
		out.Shares[k] = float64(v) / float64(total)
	}
	names := make([]string, 0, len(flat))
	for name := range flat {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(flat[b], flat[a]), strings.Compare(a, b))
	})
	for _, name := range names[:min(5, len(names))] {
		out.Top = append(out.Top, fmt.Sprintf("%s %.1f%%", name, 100*float64(flat[name])/float64(total)))
	}
	return out, nil
}

// shareOf is the share sample s counts for: the first of shareFrames with a
// function on its stack.
func shareOf(s *profile.Sample) string {
	for _, sf := range shareFrames {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, prefix := range sf.prefixes {
					if strings.HasPrefix(line.Function.Name, prefix) {
						return sf.share
					}
				}
			}
		}
	}
	return ShareOther
}

// Summary is the profile in a line: cores and the largest shares.
func (c CPUProfile) Summary() string {
	keys := make([]string, 0, len(c.Shares))
	for k := range c.Shares {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.Shares[b], c.Shares[a]), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*c.Shares[k]))
	}
	return fmt.Sprintf("%.2f cores sampled over %.0f s: %s (%s)", c.Cores, c.Seconds, strings.Join(parts, ", "), c.File)
}
