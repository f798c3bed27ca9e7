// Package lease judges the health of add-ons in Lease mode from the agent
// side: an add-on agent renews Lease <addon> in its install namespace on the
// managed cluster, and this reconciler reports on the add-on's
// ManagedClusterAddOn in the cluster namespace on the hub whether it does.
//
// For a ManagedClusterAddOn whose status.healthCheck.mode is Lease or empty,
// the Available condition is True (ManagedClusterAddOnLeaseUpdated) while
// the lease was renewed within its leaseDurationSeconds (Options'
// DefaultDuration, 60 s as OCM's add-on agents use, when it sets none) times
// the grace ratio, False (ManagedClusterAddOnLeaseUpdateStopped) once it is
// older, and Unknown (ManagedClusterAddOnLeaseNotFound) when there is no
// lease, with OCM's messages.
//
// The reconciler watches the managed cluster's Leases, so a lease that
// appears, is renewed or is deleted is reported at once, and it comes back
// by itself at the moment the lease it last saw turns stale. OCM's agent
// instead checks every 30 s and declares a lease stale after five lease
// durations of 60 s (300 s); with the watch there is no need for that slack:
// the default grace ratio of 1.5 covers OCM's add-on lease updaters, which
// renew every duration with up to 25 % jitter, and reports a stopped agent
// within 90 s.
package lease
