package v1beta2

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// IsExclusive reports whether the selector selects members by the exclusive
// cluster set label: selector type ExclusiveClusterSetLabel, its legacy v1beta1
// spelling LegacyClusterSetLabel, or empty (the default).
func (s *ManagedClusterSelector) IsExclusive() bool {
	switch s.SelectorType {
	case "", ExclusiveClusterSetLabel, LegacyClusterSetLabel:
		return true
	default:
		return false
	}
}

// Selector returns the label selector that matches the member clusters of the
// set named setName. It returns an error for an unknown selector type or an
// invalid label selector.
func (s *ManagedClusterSelector) Selector(setName string) (labels.Selector, error) {
	if s.IsExclusive() {
		return labels.SelectorFromSet(labels.Set{ClusterSetLabel: setName}), nil
	}
	if s.SelectorType != LabelSelector {
		return nil, fmt.Errorf("cluster set %q: unsupported selectorType %q", setName, s.SelectorType)
	}
	if s.LabelSelector == nil {
		// A LabelSelector set without a selector selects nothing.
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("cluster set %q: invalid labelSelector: %w", setName, err)
	}
	return sel, nil
}
