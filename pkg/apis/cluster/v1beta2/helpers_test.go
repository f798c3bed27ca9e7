package v1beta2

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestManagedClusterSelector(t *testing.T) {
	prod := labels.Set{ClusterSetLabel: "prod"}
	dev := labels.Set{ClusterSetLabel: "dev", "env": "dev"}
	tests := []struct {
		name          string
		selector      ManagedClusterSelector
		wantExclusive bool
		wantErr       bool
		matches       []labels.Set
		notMatches    []labels.Set
	}{
		{name: "empty type is exclusive", wantExclusive: true, matches: []labels.Set{prod}, notMatches: []labels.Set{dev, {}}},
		{name: "exclusive", selector: ManagedClusterSelector{SelectorType: ExclusiveClusterSetLabel},
			wantExclusive: true, matches: []labels.Set{prod}, notMatches: []labels.Set{dev}},
		{name: "legacy v1beta1 spelling is exclusive", selector: ManagedClusterSelector{SelectorType: LegacyClusterSetLabel},
			wantExclusive: true, matches: []labels.Set{prod}, notMatches: []labels.Set{dev}},
		{name: "empty label selector selects everything",
			selector: ManagedClusterSelector{SelectorType: LabelSelector, LabelSelector: &metav1.LabelSelector{}},
			matches:  []labels.Set{prod, dev, {}}},
		{name: "label selector",
			selector: ManagedClusterSelector{SelectorType: LabelSelector,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}},
			matches: []labels.Set{dev}, notMatches: []labels.Set{prod}},
		{name: "label selector type without selector selects nothing",
			selector:   ManagedClusterSelector{SelectorType: LabelSelector},
			notMatches: []labels.Set{prod, dev, {}}},
		{name: "invalid label selector",
			selector: ManagedClusterSelector{SelectorType: LabelSelector, LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}}},
			wantErr: true},
		{name: "unknown type", selector: ManagedClusterSelector{SelectorType: "Bogus"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.selector.IsExclusive(); got != tt.wantExclusive {
				t.Errorf("IsExclusive() = %v, want %v", got, tt.wantExclusive)
			}
			sel, err := tt.selector.Selector("prod")
			if (err != nil) != tt.wantErr {
				t.Fatalf("Selector() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			for _, l := range tt.matches {
				if !sel.Matches(l) {
					t.Errorf("selector %q does not match %v", sel, l)
				}
			}
			for _, l := range tt.notMatches {
				if sel.Matches(l) {
					t.Errorf("selector %q matches %v", sel, l)
				}
			}
		})
	}
}
