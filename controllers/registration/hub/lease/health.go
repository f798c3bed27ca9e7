package lease

import "time"

// DefaultGraceRatio is the default of --lease-grace-ratio: a lease is stale
// once 2 lease periods have passed since its last renewal. The agent renews
// once per period plus at most 10 % jitter, so a renewal may be late by 0.9
// periods (a slow hub, a retried request, clock skew) before the cluster
// shows Unknown, and a stopped agent shows Unknown between 0.9 and 2 periods
// after it stopped.
const DefaultGraceRatio = 2

// MinGraceRatio is the smallest --lease-grace-ratio: an agent renews up to
// 1.1 periods apart, and a smaller ratio would leave its renewals too little
// room to be late.
const MinGraceRatio = 1.5

// ClockSkewFactor bounds the tolerated clock skew between hub and agent, in
// lease periods, as OCM has it.
const ClockSkewFactor = 5

// Expiry returns the moment a lease renewed at renewed, with renewal period
// duration, becomes stale under grace ratio ratio.
func Expiry(renewed time.Time, duration time.Duration, ratio float64) time.Time {
	return renewed.Add(time.Duration(float64(duration) * ratio))
}

// ClockSynced reports whether the agent's clock, judged by the renewal time
// it wrote at (its clock's) renewed, is within ClockSkewFactor lease periods
// of the hub's clock now.
func ClockSynced(renewed, now time.Time, duration time.Duration) bool {
	skew := now.Sub(renewed)
	if skew < 0 {
		skew = -skew
	}
	return skew < ClockSkewFactor*duration
}
