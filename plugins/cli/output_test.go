package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateOutputFormat(t *testing.T) {
	tests := []struct {
		name    string
		format  string
		formats []string
		wantErr string
	}{
		{"empty", "", ReportFormats, ""},
		{"json", "json", ReportFormats, ""},
		{"yaml", "yaml", DataFormats, ""},
		{"jsonpath", "jsonpath={.hubToken}", DataFormats, ""},
		{"jsonpath not taken", "jsonpath={.hubToken}", ReportFormats, `--output "jsonpath={.hubToken}" is not supported: use json or yaml`},
		{"bad jsonpath", "jsonpath={.a", DataFormats, "--output jsonpath={.a"},
		{"wide", "wide", DataFormats, `--output "wide" is not supported: use json, yaml or jsonpath=TEMPLATE`},
		{"one format", "json", []string{"yaml"}, `--output "json" is not supported: use yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateOutputFormat(tt.format, tt.formats)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestAddOutputFlag(t *testing.T) {
	var out string
	cmd := &cobra.Command{Use: "x"}
	AddOutputFlag(cmd, &out, "Output format: json, yaml or jsonpath=TEMPLATE.", DataFormats)
	require.NoError(t, cmd.ParseFlags([]string{"-o", "yaml"}))
	assert.Equal(t, "yaml", out)
	complete, ok := cmd.GetFlagCompletionFunc("output")
	require.True(t, ok)
	got, _ := complete(cmd, nil, "")
	assert.Equal(t, []string{"json", "yaml", "jsonpath="}, got)
}
