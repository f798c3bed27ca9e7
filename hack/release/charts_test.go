package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSetChartVersions checks a release sets both version lines of every
// chart, keeps the rest, and that checkChartVersions tells a chart of
// another version.
func TestSetChartVersions(t *testing.T) {
	root := t.TempDir()
	const chart = "apiVersion: v2\nname: hub\n# a comment\nversion: 0.0.1\nappVersion: latest\nhome: https://example.com\n"
	for _, name := range []string{"hub", "klusterlet"} {
		if err := writeFile(filepath.Join(root, "config", "charts", name, "Chart.yaml"), []byte(chart)); err != nil {
			t.Fatal(err)
		}
	}
	require.ErrorContains(t, checkChartVersions(root, "v1.2.3"), "make release VERSION=v1.2.3", "charts at 0.0.1: the error names the fix")
	if err := setChartVersions(root, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	if err := checkChartVersions(root, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "config", "charts", "hub", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v2\nname: hub\n# a comment\nversion: 1.2.3\nappVersion: v1.2.3\nhome: https://example.com\n"
	if string(b) != want {
		t.Errorf("Chart.yaml =\n%s\nwant\n%s", b, want)
	}
	if err := setChartVersions(t.TempDir(), "v1.2.3"); err == nil {
		t.Error("no charts: want an error")
	}
}
