package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// jsonpathPrefix starts an -o value that prints fields of a verb's data
// with a JSONPath template, as kubectl's -o jsonpath=TEMPLATE does.
const jsonpathPrefix = "jsonpath="

// PrintData writes v, a verb's report, in format, an -o value of
// ReportFormats or DataFormats: json, yaml, or jsonpath=TEMPLATE applied to
// v's JSON form.
func PrintData(out io.Writer, format string, v any) error {
	switch {
	case format == "yaml":
		return PrintYAML(out, v)
	case strings.HasPrefix(format, jsonpathPrefix):
		jp, err := parseJSONPath(strings.TrimPrefix(format, jsonpathPrefix))
		if err != nil {
			return err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("decode JSON: %w", err)
		}
		if err := jp.Execute(out, doc); err != nil {
			return fmt.Errorf("--output jsonpath: %w", err)
		}
		return nil
	}
	return PrintJSON(out, v)
}

// parseJSONPath parses a JSONPath template as kubectl does, fields it names
// must exist.
func parseJSONPath(template string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New("output")
	if err := jp.Parse(template); err != nil {
		return nil, fmt.Errorf("--output jsonpath=%s: %w", template, err)
	}
	return jp, nil
}
