// Package placement is the hub's placement scheduler: it schedules every
// Placement with pkg/placement and writes the PlacementDecisions and the
// Placement's status, rescheduling when clusters, sets, bindings or scores
// change.
package placement
