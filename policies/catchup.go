package policies

import "time"

// NextSlot is Next under docs/policies.md#no-catch-up-bursts: when the
// slot of the next retry of an offset schedule is already past (the
// delivery waited for its endpoint, or a worker was down), the slots that
// passed are skipped, not fired back to back and not counted as attempts,
// and the next retry is the first slot at least the schedule's smallest gap
// after the last attempt. It returns how many more slots were skipped, to
// add to pr.Skipped. Schedules of gaps (fixed, exponential, a list of gaps)
// count from the last failure and never burst.
func (p Policy) NextSlot(pr Progress, seed uint64) (time.Time, int, Stop) {
	pr.Attempts += pr.Skipped
	if p.MaxAttempts > 0 && pr.Attempts-pr.Skipped >= p.MaxAttempts {
		return time.Time{}, 0, MaxAttemptsExceeded
	}
	if p.Schedule.Kind != Offsets {
		due, stop := p.Next(pr, seed)
		return due, 0, stop
	}
	earliest := pr.LastFailureAt.Add(p.Schedule.smallestGap())
	for skipped := 0; ; skipped++ {
		wait, ok := p.Schedule.wait(pr.Attempts + skipped)
		if !ok {
			return time.Time{}, skipped, MaxAttemptsExceeded
		}
		if pr.FirstFailureAt.Add(wait).Before(earliest) {
			continue // the slot passed, or is too close to the last attempt
		}
		due := pr.FirstFailureAt.Add(p.jitter(wait, seed, pr.Attempts+skipped))
		if due.Before(pr.LastFailureAt) {
			due = pr.LastFailureAt
		}
		if p.TTL > 0 && due.After(pr.FirstAttemptAt.Add(p.TTL)) {
			return time.Time{}, skipped, TTLExceeded
		}
		return due, skipped, NoStop
	}
}

// smallestGap is the shortest time between two slots of an offset schedule
// (its first offset included).
func (s Schedule) smallestGap() time.Duration {
	var gap, prev time.Duration
	for i, d := range s.Durations {
		if g := d - prev; i == 0 || g < gap {
			gap = g
		}
		prev = d
	}
	return gap
}
