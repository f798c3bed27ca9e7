package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

func TestParseSelector(t *testing.T) {
	partOf := func(v string) labels.Set { return labels.Set{apply.PartOfLabelKey: v} }
	tests := []struct {
		name      string
		selector  string
		match     []labels.Set
		noMatch   []labels.Set
		wantError string
	}{
		{
			name:    "default: the product and its examples",
			match:   []labels.Set{partOf(ProductPartOf), partOf(ExamplesPartOf), {apply.PartOfLabelKey: apply.PartOfLabelValue, "app": "x"}},
			noMatch: []labels.Set{{}, partOf("other"), partOf("kubectl-ocm-example"), {"app": "kubectl-ocm"}},
		},
		{
			name:     "explicit selector replaces the default",
			selector: "app=whoami",
			match:    []labels.Set{{"app": "whoami"}},
			noMatch:  []labels.Set{partOf(ProductPartOf), partOf(ExamplesPartOf)},
		},
		{name: "invalid selector", selector: "app in (", wantError: `parse selector "app in ("`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written, sel, err := parseSelector(tt.selector)
			if tt.wantError != "" {
				require.ErrorContains(t, err, tt.wantError)
				return
			}
			require.NoError(t, err)
			if tt.selector == "" {
				assert.Equal(t, DefaultSelector, written)
			}
			for _, l := range tt.match {
				assert.True(t, sel.Matches(l), "%s should select %v", written, l)
			}
			for _, l := range tt.noMatch {
				assert.False(t, sel.Matches(l), "%s should not select %v", written, l)
			}
		})
	}
}
