package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// The -o of a verb takes one of two paths. A verb that prints API objects
// holds kubectl's genericclioptions.PrintFlags (PrintFlags.AddFlags, then
// ValidateOutput or ValidateListOutput, then PrintFlags.ToPrinter or
// PrintList). A verb that prints a report of its own, a Go value, adds -o
// with AddOutputFlag and one of ReportFormats or DataFormats, checks it with
// ValidateOutputFormat and prints the report with PrintData. Both paths
// refuse a format with the same message (unsupportedOutput).

// JSONPathFormat stands for the -o values jsonpath=TEMPLATE in a list of
// formats.
const JSONPathFormat = jsonpathPrefix + "TEMPLATE"

var (
	// ReportFormats are the -o values of a verb that prints a report: json
	// or yaml.
	ReportFormats = []string{"json", "yaml"}
	// DataFormats are the -o values of a verb whose report is data a script
	// picks fields from: json, yaml or jsonpath=TEMPLATE.
	DataFormats = []string{"json", "yaml", JSONPathFormat}
	// ManifestFormats are the -o values of PrintManifests: yaml or json.
	ManifestFormats = []string{"yaml", "json"}
)

// AddOutputFlag adds -o (--output) to cmd, storing it in target, with
// usage and the formats it takes (ReportFormats, DataFormats or another
// list) offered for completion. An empty -o prints the verb's own text.
func AddOutputFlag(cmd *cobra.Command, target *string, usage string, formats []string) {
	cmd.Flags().StringVarP(target, "output", "o", "", usage)
	completions := make([]string, 0, len(formats))
	for _, f := range formats {
		completions = append(completions, strings.TrimSuffix(f, "TEMPLATE"))
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(completions, cobra.ShellCompDirectiveNoFileComp))
}

// ValidateOutputFormat fails unless format is empty or one of formats;
// JSONPathFormat among them takes jsonpath= with any template that parses.
func ValidateOutputFormat(format string, formats []string) error {
	switch {
	case format == "", slices.Contains(formats, format) && format != JSONPathFormat:
		return nil
	case strings.HasPrefix(format, jsonpathPrefix) && slices.Contains(formats, JSONPathFormat):
		_, err := parseJSONPath(strings.TrimPrefix(format, jsonpathPrefix))
		return err
	}
	return unsupportedOutput(format, formats)
}

// Output is the -o value of flags, "" when unset.
func Output(flags *genericclioptions.PrintFlags) string {
	if flags == nil || flags.OutputFormat == nil {
		return ""
	}
	return *flags.OutputFormat
}

// ValidateOutput fails unless the -o value of flags is empty or one of allowed.
func ValidateOutput(flags *genericclioptions.PrintFlags, allowed ...string) error {
	f := Output(flags)
	if f == "" || slices.Contains(allowed, f) {
		return nil
	}
	return unsupportedOutput(f, allowed)
}

// ValidateListOutput fails unless the -o value of flags is empty (the
// table), wide, or a format flags can print: json, yaml, name, or one of
// kubectl's templates such as jsonpath=TEMPLATE, which is parsed here.
func ValidateListOutput(flags *genericclioptions.PrintFlags) error {
	f := Output(flags)
	if f == "" || f == "wide" {
		return nil
	}
	if _, err := flags.ToPrinter(); err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return unsupportedOutput(f, append([]string{"wide"}, flags.AllowedFormats()...))
		}
		return fmt.Errorf("--output %q: %w", f, err)
	}
	return nil
}

// unsupportedOutput is the error of every verb given an -o value it does
// not print: `--output "x" is not supported: use a, b or c`.
func unsupportedOutput(format string, formats []string) error {
	use := strings.Join(formats, ", ")
	if n := len(formats); n > 1 {
		use = strings.Join(formats[:n-1], ", ") + " or " + formats[n-1]
	}
	return fmt.Errorf("--output %q is not supported: use %s", format, use)
}
