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

// ValidateDataOutput fails unless format, the -o of a verb that prints a
// summary or its data, is empty (the summary), json, yaml or
// jsonpath=TEMPLATE with a template that parses.
func ValidateDataOutput(format string) error {
	switch {
	case format == "", format == "json", format == "yaml":
		return nil
	case strings.HasPrefix(format, jsonpathPrefix):
		_, err := parseJSONPath(strings.TrimPrefix(format, jsonpathPrefix))
		return err
	}
	return fmt.Errorf("--output %q is not supported: use json, yaml or jsonpath=TEMPLATE", format)
}

// PrintData writes v, a verb's data, in format: json, yaml, or
// jsonpath=TEMPLATE applied to v's JSON form.
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
