package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// chart is the Chart.yaml of one Helm chart under config/charts, whose
// version and appVersion (the default image tag) a release sets.
type chart struct {
	path string
	data []byte
}

// readCharts reads the Chart.yaml of every chart under config/charts.
func readCharts(root string) ([]chart, error) {
	files, err := filepath.Glob(filepath.Join(root, "config", "charts", "*", "Chart.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Helm chart under config/charts (%v)", err)
	}
	charts := make([]chart, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		charts = append(charts, chart{f, b})
	}
	return charts, nil
}

// chartVersionLine matches a chart's top-level version or appVersion line.
var chartVersionLine = regexp.MustCompile(`(?m)^(version|appVersion): *(.*)$`)

// chartVersions returns the version and appVersion of a Chart.yaml.
func chartVersions(b []byte) (version, appVersion string) {
	for _, m := range chartVersionLine.FindAllSubmatch(b, -1) {
		v := strings.Trim(string(m[2]), `"'`)
		if string(m[1]) == "version" {
			version = v
		} else {
			appVersion = v
		}
	}
	return version, appVersion
}

// setChartVersions gives every chart under config/charts the release version
// v: appVersion v (the image tag the charts deploy by default) and version v
// without its leading v (Helm's chart versions are semantic versions without
// it). The rest of each file is kept as it is.
func setChartVersions(root, v string) error {
	charts, err := readCharts(root)
	if err != nil {
		return err
	}
	for _, c := range charts {
		if version, app := chartVersions(c.data); version == "" || app == "" {
			return fmt.Errorf("%s has no version or appVersion line to set", c.path)
		}
		out := chartVersionLine.ReplaceAllFunc(c.data, func(line []byte) []byte {
			if bytes.HasPrefix(line, []byte("appVersion:")) {
				return []byte("appVersion: " + v)
			}
			return []byte("version: " + strings.TrimPrefix(v, "v"))
		})
		if err := writeFile(c.path, out); err != nil {
			return err
		}
	}
	return nil
}

// checkChartVersions reports a chart under config/charts whose version or
// appVersion is not the release version v.
func checkChartVersions(root, v string) error {
	charts, err := readCharts(root)
	if err != nil {
		return err
	}
	for _, c := range charts {
		if version, app := chartVersions(c.data); version != strings.TrimPrefix(v, "v") || app != v {
			return fmt.Errorf("%s has version %q and appVersion %q, not release %s: run make release VERSION=%s", c.path, version, app, v, v)
		}
	}
	return nil
}
