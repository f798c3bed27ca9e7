package cli

import "testing"

func TestExamples(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"tabs", "\n\t# a\n\tkubectl ocm x\n", "  # a\n  kubectl ocm x"},
		{"blank lines kept", "\n\t\t# a\n\n\t\tb\n", "  # a\n\n  b"},
		{"mixed depth", "\n  a\n    b\n", "  a\n    b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Examples(tt.in); got != tt.want {
				t.Errorf("Examples() = %q, want %q", got, tt.want)
			}
		})
	}
}
