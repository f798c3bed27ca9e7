package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// chartFiles are the Chart.yaml files of the Helm charts under config/charts,
// whose version and appVersion (the default image tag) a release sets.
func chartFiles(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "config", "charts", "*", "Chart.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Helm chart under config/charts (%v)", err)
	}
	return files, nil
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
	files, err := chartFiles(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if version, app := chartVersions(b); version == "" || app == "" {
			return fmt.Errorf("%s has no version or appVersion line to set", f)
		}
		out := chartVersionLine.ReplaceAllFunc(b, func(line []byte) []byte {
			if bytes.HasPrefix(line, []byte("appVersion:")) {
				return []byte("appVersion: " + v)
			}
			return []byte("version: " + strings.TrimPrefix(v, "v"))
		})
		if err := writeFile(f, out); err != nil {
			return err
		}
	}
	return nil
}

// checkChartVersions reports a chart under config/charts whose version or
// appVersion is not the release version v.
func checkChartVersions(root, v string) error {
	files, err := chartFiles(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if version, app := chartVersions(b); version != strings.TrimPrefix(v, "v") || app != v {
			return fmt.Errorf("%s has version %q and appVersion %q, not release %s: run make release VERSION=%s", f, version, app, v, v)
		}
	}
	return nil
}
