package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestClusterFlagHint(t *testing.T) {
	newCmd := func(withClusters bool, args ...string) *cobra.Command {
		cmd := &cobra.Command{Use: "x"}
		cmd.Flags().String("cluster", "", "kubectl's")
		if withClusters {
			cmd.Flags().StringSlice("clusters", nil, "managed clusters")
		}
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	failed := errors.New("failed")
	tests := []struct {
		name     string
		cmd      *cobra.Command
		err      error
		wantHint bool
	}{
		{"--cluster on a verb with --clusters", newCmd(true, "--cluster", "c1"), failed, true},
		{"no error", newCmd(true, "--cluster", "c1"), nil, false},
		{"--cluster not given", newCmd(true), failed, false},
		{"a verb without --clusters", newCmd(false, "--cluster", "c1"), failed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clusterFlagHint(tt.cmd, tt.err)
			if tt.err == nil {
				if got != nil {
					t.Fatalf("got %v for no error", got)
				}
				return
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("%v does not wrap the error", got)
			}
			if tt.wantHint {
				assert.ErrorContains(t, got, "name managed clusters with --clusters c1")
			} else {
				assert.NotContains(t, got.Error(), "name managed clusters with --clusters c1")
			}
		})
	}
}
