package helm

import "testing"

// TestLint runs `helm lint --strict` on each chart with the values it
// requires.
func TestLint(t *testing.T) {
	tests := []struct {
		chart string
		args  []string
	}{
		{chart: "hub"},
		{chart: "klusterlet", args: []string{"--set", "klusterlet.clusterName=cluster1", "--set", "bootstrapHubKubeConfig=apiVersion: v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			t.Setenv("HELM_CACHE_HOME", t.TempDir())
			t.Setenv("HELM_CONFIG_HOME", t.TempDir())
			t.Setenv("HELM_DATA_HOME", t.TempDir())
			if out, err := runHelm(t, append([]string{"lint", "--strict", chartDir(tt.chart)}, tt.args...)...); err != nil {
				t.Errorf("helm lint %s: %v\n%s", tt.chart, err, out)
			}
		})
	}
}
