package valuesfile

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Flag is the name of the values file flag of `hub init` and `join`.
const Flag = "values-file"

// AddFlag registers --values-file, and alias (clusteradm's name for it), to
// set path: a file of the values of chart, which what names (such as
// "the hub") takes.
func AddFlag(fs *pflag.FlagSet, path *string, alias, chart, what string) {
	fs.StringVar(path, Flag, *path, fmt.Sprintf(
		"A YAML file of the %s Helm chart's values (config/charts/%s/values.yaml) to install %s with, as 'helm install -f FILE' would; flags given win over its values, and a key the chart lacks or the command cannot apply is refused (see docs/install.md#one-values-file-for-the-cli-helm-and-gitops).",
		chart, chart, what))
	fs.StringVar(path, alias, *path, "Alias of --"+Flag+" (clusteradm's name).")
}

// Given returns the flag of fs that named the values file ("--values-file"
// or "--<alias>"), "" when neither was given, and an error when both were.
func Given(fs *pflag.FlagSet, alias string) (string, error) {
	switch a, b := fs.Changed(Flag), fs.Changed(alias); {
	case a && b:
		return "", fmt.Errorf("--%s and --%s name the same file: give one of them", Flag, alias)
	case a:
		return "--" + Flag, nil
	case b:
		return "--" + alias, nil
	}
	return "", nil
}

// Set sets *dst to val when the flag was not given on the command line
// and val is not empty: a flag given wins over the values file.
func Set[T comparable](fs *pflag.FlagSet, flag string, dst *T, val T) {
	var zero T
	if !fs.Changed(flag) && val != zero {
		*dst = val
	}
}

// SetSlice is Set for a list flag.
func SetSlice[T any](fs *pflag.FlagSet, flag string, dst *[]T, val []T) {
	if !fs.Changed(flag) && len(val) > 0 {
		*dst = val
	}
}
