// Package placement holds the scheduling rules of a Placement as pure
// functions over objects already read from the hub: candidate clusters from
// bound ManagedClusterSets, predicates (label, claim and CEL selectors),
// taints and tolerations, prioritizers, spread constraints and decision
// groups. It makes no API calls, so the hub's scheduler and
// `kubectl ocm placement explain` share one implementation and can never
// disagree about why a cluster was or was not chosen.
package placement
