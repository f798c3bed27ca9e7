package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steps is a Verb whose Complete and Validate return the errors given, and
// which records whether Validate ran.
type steps struct {
	complete, validate error
	validated          bool
}

func (s *steps) Complete(*cobra.Command, []string) error { return s.complete }
func (s *steps) Validate() error                         { s.validated = true; return s.validate }
func (s *steps) Run(context.Context) error               { return nil }

func TestCompleteValidate(t *testing.T) {
	bad := errors.New("--image is bad")
	unreadable := errors.New("read --ca-file: no such file")
	tests := []struct {
		name          string
		complete      error
		validate      error
		wantValidated bool
		// want is the error, one line per mistake; empty: none.
		want string
	}{
		{name: "no mistakes", wantValidated: true},
		{name: "Validate's mistakes", validate: errors.New("--mode is bad"), wantValidated: true, want: "--mode is bad"},
		{name: "flag errors come with Validate's", complete: FlagErrors(bad, nil, errors.New("--tls-min-version is bad")),
			validate: errors.New("--mode is bad"), wantValidated: true, want: "--image is bad\n--tls-min-version is bad\n--mode is bad"},
		{name: "no flag errors", complete: FlagErrors(nil, nil), wantValidated: true},
		{name: "another error of Complete stops it", complete: unreadable, validate: errors.New("--mode is bad"), want: unreadable.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &steps{complete: tt.complete, validate: tt.validate}
			err := CompleteValidate(s, nil, nil)
			assert.Equal(t, tt.wantValidated, s.validated, "Validate ran")
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
	require.ErrorIs(t, CompleteValidate(&steps{complete: FlagErrors(bad)}, nil, nil), bad, "the flag errors unwrap")
}
