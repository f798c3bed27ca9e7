package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestFieldManager checks that every field manager of a write, however long
// the caller's name, is one the API server accepts.
func TestFieldManager(t *testing.T) {
	tests := []struct {
		name, tool, caller, want string
	}{
		{"short", "apply_work", "alice", "kubectl-ocm-mcp/apply_work/alice"},
		{"long caller cut", "apply_work", strings.Repeat("a", 200), ("kubectl-ocm-mcp/apply_work/" + strings.Repeat("a", 200))[:metav1validation.FieldManagerMaxLength]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FieldManager(tt.tool, tt.caller)
			assert.Equal(t, tt.want, got)
			assert.Empty(t, metav1validation.ValidateFieldManager(got, field.NewPath("fieldManager")))
		})
	}
}
