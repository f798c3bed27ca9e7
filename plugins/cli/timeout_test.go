package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestTimeoutFlag(t *testing.T) {
	tests := []struct {
		arg     string
		want    time.Duration
		wantErr string
	}{
		{"", 5 * time.Minute, ""},
		{"300", 300 * time.Second, ""},
		{"90s", 90 * time.Second, ""},
		{"2m30s", 150 * time.Second, ""},
		{"0", 0, ""},
		{"five", 0, "neither a duration such as 5m or 90s nor a number of seconds"},
		{"-3", 0, "neither a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			var d time.Duration
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			AddTimeoutFlag(fs, &d, 5*time.Minute, "How long.")
			var args []string
			if tt.arg != "" {
				args = []string{"--timeout", tt.arg}
			}
			err := fs.Parse(args)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil || d != tt.want {
				t.Fatalf("--timeout %q = %s, %v; want %s", tt.arg, d, err, tt.want)
			}
		})
	}
}
