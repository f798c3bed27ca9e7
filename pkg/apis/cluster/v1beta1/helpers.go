package v1beta1

import "fmt"

// PlacementDecisionName returns the name of the index-th PlacementDecision of
// the Placement placementName, <placement>-decision-<index>, counting from 1.
func PlacementDecisionName(placementName string, index int) string {
	return fmt.Sprintf("%s-decision-%d", placementName, index)
}

// SchedulingDisabled reports whether the Placement carries the annotation
// that makes the scheduler skip it.
func (p *Placement) SchedulingDisabled() bool {
	return p.Annotations[PlacementDisableAnnotation] == "true"
}
