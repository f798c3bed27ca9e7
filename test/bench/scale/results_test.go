package scale

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

func TestParseSteps(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "100,500, 1000", want: []int{100, 500, 1000}},
		{in: "2", want: []int{2}},
		{in: "", wantErr: "no steps"},
		{in: "100,50", wantErr: "must increase"},
		{in: "1", wantErr: "at least the 2 clusters"},
		{in: "100,x", wantErr: `"x" is not a cluster count`},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSteps(tt.in, 2)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// sampleResults are two steps of made-up figures.
func sampleResults() *Results {
	step := func(n int, rss float64) Step {
		return Step{
			Clusters: n, Added: n, RegisterSeconds: float64(n) / 10, IdleSeconds: 120,
			Processes: map[string]Process{
				ProcHubController: {RSSMiB: rss, PeakMiB: rss + 5, IdleCPUCores: 0.01},
				ProcAPIServer:     {RSSMiB: 3 * rss, IdleCPUCores: 0.1},
				ProcEtcd:          {RSSMiB: rss / 2},
			},
			IdleRequestsPerSecond: float64(n) / 30, IdleWritesPerSecond: float64(n) / 55, IdleLeaseWritesPerSecond: float64(n) / 60,
			IdleRequests:     map[string]float64{"UPDATE leases": float64(n) / 60},
			Ops:              map[string]Op{OpJoin: {Seconds: 0.6}, OpRolloutAll: {Seconds: float64(n) / 40, RequestsPerSecond: 90}},
			IdleLeaseRenewal: benchkit.Summary{Count: 2 * n, P50: 0.004, P90: 0.006, P99: 0.0124, Max: 0.2},
		}
	}
	return &Results{Machine: "2 CPUs", Steps: []Step{step(100, 60), step(500, 110)}}
}

func TestWriteAndPlot(t *testing.T) {
	dir := t.TempDir()
	r := sampleResults()
	r.Steps[1].IdleProfile = &CPUProfile{File: "idle.pb.gz", Seconds: 120, Cores: 0.1, Shares: map[string]float64{ShareAuthorization: 0.5, ShareOther: 0.5}}
	require.NoError(t, r.Write(dir))

	back, err := ReadResults(dir)
	require.NoError(t, err)
	require.Equal(t, r, back)

	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	require.Len(t, lines, 3, "a header and one row per step")
	require.True(t, strings.HasPrefix(lines[0], "clusters,register_s,hub_controller_rss_mib"), lines[0])
	// 500 clusters: 110 MiB is 0.22 MiB per cluster, 500/55 writes per
	// second are 1.091 per cluster per minute, and the rollout took 12.5 s;
	// operations not run are empty.
	require.Contains(t, lines[2], "500,50.000,110.000,0.220,")
	// Between the steps the idle writes grew by 500/55 − 100/55 per
	// second for 400 more clusters: 1.091 per cluster per minute.
	// The idle window's 1000 lease renewals, p50 4 ms and p99 12.4 ms;
	// none timed during the operations.
	require.Contains(t, lines[2], ",8.333,1.091,1.091,1.000,1000,4.000,12.400,0,0.000,0.600,,12.500,,,,")
	require.Contains(t, lines[1], ",1.667,1.091,,1.000,200,4.000,12.400,0,0.000,0.600,", "no slope at the first step")
	// The API server's authorization share while registering, idle and
	// during rollout All: empty without a profile.
	require.True(t, strings.HasSuffix(lines[2], ",,0.500,"), lines[2])
	require.True(t, strings.HasSuffix(lines[1], ",,,"), lines[1])

	require.NoError(t, Plot(r, dir))
	for file, want := range map[string]string{
		PlotMemory:   "kube-apiserver",
		PlotRequests: "OCM lease writes",
		PlotOps:      OpRolloutAll,
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		require.Contains(t, string(data), "<svg", file)
		require.Contains(t, string(data), want, file)
	}
}

func TestTopRequests(t *testing.T) {
	got := TopRequests(map[string]float64{"GET leases": 1, "UPDATE leases": 3, "LIST pods": 1, "WATCH x": 0.5}, 3)
	require.Equal(t, []string{"UPDATE leases 3.00", "GET leases 1.00", "LIST pods 1.00"}, got)
}

func TestBucketSummary(t *testing.T) {
	bounds := []float64{1, 2, 5, 10}
	// 10 observations in (0,1], 10 in (1,2], none in (2,5], 0 in (5,10].
	s := BucketSummary(bounds, []float64{10, 20, 20, 20})
	assert.Equal(t, 20, s.Count)
	assert.InDelta(t, 1.0, s.P50, 1e-9, "the 10th of 20 is the top of the first bucket")
	assert.InDelta(t, 1.8, s.P90, 1e-9, "the 18th of 20 is 8/10 into (1,2]")
	assert.Equal(t, 2.0, s.Max, "the highest bucket that gained an observation")
	assert.Equal(t, benchkit.Summary{}, BucketSummary(bounds, []float64{0, 0, 0, 0}))
	assert.Equal(t, benchkit.Summary{}, BucketSummary(bounds, []float64{1, 2}), "counts that do not match the bounds")
}

func TestKubeFleetMarkdown(t *testing.T) {
	r := &KubeFleetReport{Machine: "2 CPUs", Clusters: 1000, Simulated: 998, Placements: 1000, Rollouts: 100,
		Placement: benchkit.Summary{Count: 1000, P50: 1, P90: 2, P99: 3, Max: 4},
		Stages:    []benchkit.Summary{{Count: 100, P50: 5}, {Count: 100, P50: 6}, {Count: 100, P50: 7}},
		Phases: map[string]Phase{
			PhasePlacements: {CPUCores: map[string]float64{ProcHubController: 0.5}, Memory: map[string]Process{ProcHubController: {PeakMiB: 100}}},
			PhaseRollouts:   {CPUCores: map[string]float64{ProcHubController: 0.9}, Memory: map[string]Process{ProcHubController: {PeakMiB: 80}}},
		}}
	md := r.Markdown()
	assert.Contains(t, md, "| Placement, create → decisions (100 of 1000 clusters by label, 3 decision groups) | "+kubeFleetPlacement+" | p50 1.0 s, p90 2.0 s, p99 3.0 s, max 4.0 s (1000) |")
	assert.Contains(t, md, "| Rollout stage 3 complete, from the rollout's create | — | p50 7.0 s")
	assert.Contains(t, md, "| Hub controller, peak memory / busiest phase's CPU | "+kubeFleetHub+" | 100 MiB, 0.90 cores |", "the peak over the phases")
	assert.Contains(t, md, "The 998 simulated agents")
}

func TestSizingMarkdown(t *testing.T) {
	r := sampleResults()
	s := &r.Steps[1]
	s.StorageMiB = 42
	s.Ops[OpRolloutAll] = Op{Seconds: 12.5, CPUCores: map[string]float64{ProcHubController: 0.7, ProcAPIServer: 1.4}}
	s.Ops[OpRolloutAllBaseline] = Op{Seconds: 30.25, CPUCores: map[string]float64{ProcHubController: 0.2}}
	s.Ops[OpHubRestart] = Op{Seconds: 20}
	s.IdleProfile = &CPUProfile{Shares: map[string]float64{ShareAuthorization: 0.594}}
	s.OpsLeaseRenewal = benchkit.Summary{Count: 40, P99: 0.0804}
	md := r.SizingMarkdown()
	assert.Contains(t, md, "Measured on 2 CPUs.")
	assert.Contains(t, md, "| 500 | 115 MiB, 0.01 / 0.70 cores (rollout-all) | 0 MiB, 0.10 / 1.40 cores (rollout-all) | 59 % / — | 0 MiB, 42 MiB | 12 ms / 80 ms | 12.5 s (30.2 s) | 20.0 s |")
	assert.Contains(t, md, "| 100 | 65 MiB, 0.01 / 0.01 cores (idle) |", "a step whose operations used no CPU figures is at its busiest idle")
	assert.Contains(t, md, "| 12 ms / — |", "no renewal timed during the operations")
	dir := t.TempDir()
	require.NoError(t, r.Write(dir))
	data, err := os.ReadFile(filepath.Join(dir, "sizing.md"))
	require.NoError(t, err)
	assert.Equal(t, md, string(data))
}
