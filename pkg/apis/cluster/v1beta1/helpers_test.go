package v1beta1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPlacementDecisionName(t *testing.T) {
	tests := []struct {
		placement string
		index     int
		want      string
	}{
		{placement: "placement-aws", index: 1, want: "placement-aws-decision-1"},
		{placement: "p", index: 12, want: "p-decision-12"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := PlacementDecisionName(tt.placement, tt.index); got != tt.want {
				t.Errorf("PlacementDecisionName(%q, %d) = %q, want %q", tt.placement, tt.index, got, tt.want)
			}
		})
	}
}

func TestSchedulingDisabled(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{name: "no annotations"},
		{name: "annotation true", annotations: map[string]string{PlacementDisableAnnotation: "true"}, want: true},
		{name: "annotation false", annotations: map[string]string{PlacementDisableAnnotation: "false"}},
		{name: "other annotation", annotations: map[string]string{"foo": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Placement{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			if got := p.SchedulingDisabled(); got != tt.want {
				t.Errorf("SchedulingDisabled() = %v, want %v", got, tt.want)
			}
		})
	}
}
