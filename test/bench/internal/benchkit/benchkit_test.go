package benchkit

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// The unit tests cover the harness's own arithmetic and parsing; they start
// no control planes and run under plain `go test` and -short.

func TestQuantile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{name: "median of five is the third", xs: []float64{5, 1, 4, 2, 3}, q: 0.5, want: 3},
		{name: "median of four is the lower middle", xs: []float64{4, 1, 3, 2}, q: 0.5, want: 2},
		{name: "max", xs: []float64{0.9, 1.4, 1.1}, q: 1, want: 1.4},
		{name: "p99 of three is the max", xs: []float64{0.9, 1.4, 1.1}, q: 0.99, want: 1.4},
		{name: "one value", xs: []float64{2.5}, q: 0.5, want: 2.5},
		{name: "tiny q is the min", xs: []float64{3, 2, 1}, q: 0.01, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.xs, tt.q); got != tt.want {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Quantile(nil) = %v, want NaN", got)
	}
}

func TestParseProcStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    ProcMemory
		wantErr bool
	}{
		{
			name:   "typical",
			status: "Name:\tocm-controller\nVmPeak:\t 1300000 kB\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\nThreads:\t12\n",
			want:   ProcMemory{RSS: 40 << 20, HWM: 60 << 20},
		},
		{
			name:   "with anonymous and file pages",
			status: "Name:\tocm-controller\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\nRssAnon:\t   10240 kB\nRssFile:\t   30720 kB\nRssShmem:\t       0 kB\n",
			want:   ProcMemory{RSS: 40 << 20, HWM: 60 << 20, RSSAnon: 10 << 20, RSSFile: 30 << 20},
		},
		{
			name:   "only the memory lines",
			status: "Name:\tocm-controller\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\n",
			want:   ProcMemory{RSS: 40 << 20, HWM: 60 << 20},
		},
		{name: "no memory lines (kernel thread)", status: "Name:\tkthreadd\nThreads:\t1\n", wantErr: true},
		{name: "no memory lines, name only", status: "Name:\tkthreadd\n", wantErr: true},
		{name: "garbled value", status: "VmHWM:\t1 kB\nVmRSS:\tlots kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStatus(strings.NewReader(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseKB(t *testing.T) {
	rollup := "55708da5d000-7ffe8b26a000 ---p 00000000 00:00 0   [rollup]\nRss:   1784 kB\nPss:   269 kB\nPss_Anon:   116 kB\nPss_File:   153 kB\n"
	var pss, anon, file uint64
	if err := parseKB(strings.NewReader(rollup), map[string]*uint64{"Pss:": &pss, "Pss_Anon:": &anon, "Pss_File:": &file}, 3); err != nil {
		t.Fatal(err)
	}
	if pss != 269<<10 || anon != 116<<10 || file != 153<<10 {
		t.Errorf("Pss %d, Pss_Anon %d, Pss_File %d", pss, anon, file)
	}
	if err := parseKB(strings.NewReader("Rss: 1 kB\n"), map[string]*uint64{"Pss:": &pss}, 1); err == nil {
		t.Error("no error for a missing line")
	}
}

func TestParseMapsRange(t *testing.T) {
	tests := []struct {
		line       string
		start, end uint64
		wantErr    bool
	}{
		{line: "00400000-021e2000 r-xp 00000000 fd:00 1234   /usr/local/bin/ocm-controller", start: 0x400000, end: 0x21e2000},
		{line: "7ffd1c3a1000-7ffd1c3c2000 rw-p 00000000 00:00 0   [stack]", start: 0x7ffd1c3a1000, end: 0x7ffd1c3c2000},
		{line: "garbage", wantErr: true},
		{line: "zz-10 r-xp", wantErr: true},
	}
	for _, tt := range tests {
		start, end, err := parseMapsRange(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseMapsRange(%q): err %v, wantErr %v", tt.line, err, tt.wantErr)
			continue
		}
		if start != tt.start || end != tt.end {
			t.Errorf("parseMapsRange(%q) = %#x-%#x, want %#x-%#x", tt.line, start, end, tt.start, tt.end)
		}
	}
}

func TestUniqueResidentOfThisProcess(t *testing.T) {
	got, ok, err := UniqueResident(os.Getpid(), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("page frame numbers are hidden from this user")
	}
	m, err := ReadProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// The same process twice counts its pages once; the two readings are
	// moments apart, so allow for a few MiB of change.
	if diff := math.Abs(float64(got) - float64(m.RSS)); diff > 8<<20 {
		t.Errorf("UniqueResident of this process twice = %s, its VmRSS %s", MiB(got), MiB(m.RSS))
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	stat := "4242 (ocm (con) troller) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 1000000 5000 18446744073709551615\n"
	got, err := ParseProcStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("ParseProcStat = %s, want %s", got, want)
	}
	for _, bad := range []string{"no name", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12"} {
		if _, err := ParseProcStat(bad); err == nil {
			t.Errorf("ParseProcStat(%q): no error", bad)
		}
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"hub", "--metrics-bind-address=127.0.0.1:4000", "--health-probe-bind-address", "127.0.0.1:4001"}
	for name, want := range map[string]string{
		"--metrics-bind-address":      "127.0.0.1:4000",
		"--health-probe-bind-address": "127.0.0.1:4001",
		"--leader-elect":              "",
	} {
		if got := FlagValue(args, name); got != want {
			t.Errorf("FlagValue(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestTunnelPort(t *testing.T) {
	port, err := TunnelPort([]string{"tunnel", "--tunnel-bind-address=127.0.0.1:9443", "--metrics-bind-address=127.0.0.1:4000"})
	if err != nil || port != 9443 {
		t.Errorf("TunnelPort = %d, %v; want 9443", port, err)
	}
	for _, args := range [][]string{{"tunnel"}, {"--tunnel-bind-address=127.0.0.1"}, {"--tunnel-bind-address=:https"}} {
		if _, err := TunnelPort(args); err == nil {
			t.Errorf("TunnelPort(%q): no error", args)
		}
	}
}

func TestAckWorkStatus(t *testing.T) {
	deployment := func(replicas string) workv1.Manifest {
		spec := ""
		if replicas != "" {
			spec = `,"spec":{"replicas":` + replicas + `}`
		}
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"agent","namespace":"ns"}` + spec + `}`)}}
	}
	configMap := workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"}}`)}}
	wellKnown := []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "agent"},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
	}}
	tests := []struct {
		name      string
		manifests []workv1.Manifest
		configs   []workv1.ManifestConfigOption
		// wantReady is the ReadyReplicas feedback of manifest 0, -1 for none.
		wantReady int64
	}{
		{name: "deployment with the well-known status rule, default replicas", manifests: []workv1.Manifest{deployment("")}, configs: wellKnown, wantReady: 1},
		{name: "deployment with three replicas", manifests: []workv1.Manifest{deployment("3"), configMap}, configs: wellKnown, wantReady: 3},
		{name: "deployment without a feedback rule", manifests: []workv1.Manifest{deployment("")}, wantReady: -1},
		{name: "config map only", manifests: []workv1.Manifest{configMap}, configs: wellKnown, wantReady: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workv1.ManifestWork{
				ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "w", Generation: 4},
				Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: tt.manifests}, ManifestConfigs: tt.configs},
			}
			st, err := AckWorkStatus(w)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
				c := meta.FindStatusCondition(st.Conditions, typ)
				if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 4 {
					t.Errorf("%s = %+v, want True at generation 4", typ, c)
				}
			}
			if len(st.ResourceStatus.Manifests) != len(tt.manifests) {
				t.Fatalf("%d manifest statuses, want %d", len(st.ResourceStatus.Manifests), len(tt.manifests))
			}
			ready := int64(-1)
			for _, v := range st.ResourceStatus.Manifests[0].StatusFeedbacks.Values {
				if v.Name == "ReadyReplicas" {
					ready = *v.Value.Integer
				}
			}
			if ready != tt.wantReady {
				t.Errorf("ReadyReplicas = %d, want %d", ready, tt.wantReady)
			}
			w.Status = st
			again, err := AckWorkStatus(w)
			if err != nil || !equalStatus(again, st) {
				t.Errorf("acknowledging an acknowledged work changes its status (err %v)", err)
			}
		})
	}
}

func TestParseSmapsWorkingSet(t *testing.T) {
	const smaps = `00400000-021e2000 r-xp 00000000 fe:00 9994988                            /usr/bin/ocm-controller
Size:              30600 kB
Rss:               20000 kB
Referenced:         5000 kB
Anonymous:             0 kB
0476b000-04817000 rw-p 0436b000 fe:00 9994988                            /usr/bin/ocm-controller
Rss:                 688 kB
Referenced:          400 kB
Anonymous:           300 kB
1f1d45000000-1f1d46400000 rw-p 00000000 00:00 0 
Rss:               14000 kB
Referenced:        10000 kB
Anonymous:         14000 kB
7ffd1000-7ffd2000 r-xp 00000000 00:00 0                                  [vdso]
Rss:                   4 kB
Referenced:            4 kB
Anonymous:             0 kB
`
	got, err := ParseSmapsWorkingSet(strings.NewReader(smaps))
	if err != nil {
		t.Fatal(err)
	}
	want := WorkingSet{Anon: 14300 << 10, FileResident: (20000 + 388) << 10, FileReferenced: (5000 + 100) << 10}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.Total() != (14300+5100)<<10 {
		t.Errorf("Total() = %d", got.Total())
	}
	for name, bad := range map[string]string{
		"empty":         "",
		"no Referenced": "00400000-021e2000 r-xp 00000000 fe:00 1 /bin/x\nRss: 4 kB\n",
		"garbled value": "00400000-021e2000 r-xp 00000000 fe:00 1 /bin/x\nRss: four kB\nReferenced: 4 kB\n",
		"no inode":      "00400000-021e2000 r-xp 00000000\nRss: 4 kB\nReferenced: 4 kB\n",
	} {
		if _, err := ParseSmapsWorkingSet(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWorkingSetOfThisProcess(t *testing.T) {
	if err := ClearReferenced(os.Getpid()); errors.Is(err, os.ErrNotExist) {
		t.Skipf("this kernel has no clear_refs: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	// Touch a heap buffer after the clear: its pages are anonymous, and the
	// code that runs now is referenced file pages of the test binary.
	buf := make([]byte, 4<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	w, err := ReadWorkingSet(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if w.FileReferenced == 0 || w.FileReferenced > w.FileResident {
		t.Errorf("referenced file pages %s, resident %s: want some, at most the resident", MiB(w.FileReferenced), MiB(w.FileResident))
	}
	if w.Anon < uint64(len(buf)) {
		t.Errorf("anonymous pages %s, less than the %s buffer just written", MiB(w.Anon), MiB(uint64(len(buf))))
	}
	// smaps and status are read moments apart; allow a few MiB of change.
	if diff := math.Abs(float64(w.Anon+w.FileResident) - float64(m.RSS)); diff > 8<<20 {
		t.Errorf("anonymous %s + file %s from smaps, VmRSS %s", MiB(w.Anon), MiB(w.FileResident), MiB(m.RSS))
	}
	buf[0]++
}

func TestParseList(t *testing.T) {
	got, err := ParseList(" 1m, ,2m,", time.ParseDuration)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Minute, 2 * time.Minute}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	_, err = ParseList("1m,soon", time.ParseDuration)
	assert.ErrorContains(t, err, "soon")
	if got, err := ParseList("", time.ParseDuration); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v; want nothing", got, err)
	}
}

func TestLatencyWindow(t *testing.T) {
	var w LatencyWindow
	if got := w.Take(); got != (Summary{}) {
		t.Errorf("an empty window = %+v, want zero", got)
	}
	// 200 renewals: 1..198 ms, then two slow ones. The p99 is the 198th
	// smallest (ceil(0.99 × 200)), so one slow renewal in a hundred shows
	// in it and one in two hundred does not.
	for i := 1; i <= 198; i++ {
		w.Observe(time.Duration(i) * time.Millisecond)
	}
	w.Observe(2 * time.Second)
	w.Observe(900 * time.Millisecond)
	got := w.Take()
	assert.Equal(t, 200, got.Count)
	assert.InDelta(t, 0.100, got.P50, 1e-9, "p50")
	assert.InDelta(t, 0.180, got.P90, 1e-9, "p90")
	assert.InDelta(t, 0.198, got.P99, 1e-9, "p99")
	assert.InDelta(t, 2.0, got.Max, 1e-9, "max")
	w.Observe(3 * time.Millisecond)
	w.Observe(1500 * time.Microsecond)
	next := w.Take()
	assert.Equal(t, 2, next.Count, "a Take starts a new window")
	assert.InDelta(t, 0.003, next.P99, 1e-9, "p99 of two is the larger")
	assert.InDelta(t, 0.0015, next.P50, 1e-9, "p50 of two is the smaller")
}

func TestSummarize(t *testing.T) {
	xs := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	s := Summarize(xs)
	assert.Equal(t, Summary{Count: 100, P50: 50, P90: 90, P99: 99, Max: 100}, s)
	assert.Equal(t, float64(100), xs[0], "Summarize must not sort its input")
	assert.Equal(t, Summary{}, Summarize(nil))
	assert.Equal(t, "none", Summarize(nil).String())
	assert.Equal(t, Summary{Count: 1, P50: 7, P90: 7, P99: 7, Max: 7}, Summarize([]float64{7}))
}
