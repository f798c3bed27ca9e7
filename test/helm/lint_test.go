package helm

import (
	"path/filepath"
	"testing"
)

// TestLint runs `helm lint --strict` on each chart with the values it
// requires, and with each values file of TestOneValuesFile.
func TestLint(t *testing.T) {
	type lint struct {
		name, chart string
		args        []string
	}
	tests := []lint{
		{name: "hub", chart: "hub"},
		{name: "klusterlet", chart: "klusterlet", args: []string{"--set", "klusterlet.clusterName=cluster1", "--set", "bootstrapHubKubeConfig=apiVersion: v1"}},
	}
	for _, f := range valuesFiles {
		args := []string{"--values", f.file}
		if f.chart == "klusterlet" {
			args = append(args, "--set", "bootstrapHubKubeConfig=apiVersion: v1")
		}
		tests = append(tests, lint{name: f.chart + " " + filepath.Base(f.file), chart: f.chart, args: args})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELM_CACHE_HOME", t.TempDir())
			t.Setenv("HELM_CONFIG_HOME", t.TempDir())
			t.Setenv("HELM_DATA_HOME", t.TempDir())
			if out, err := runHelm(t, append([]string{"lint", "--strict", chartDir(tt.chart)}, tt.args...)...); err != nil {
				t.Errorf("helm lint %s: %v\n%s", tt.name, err, out)
			}
		})
	}
}
