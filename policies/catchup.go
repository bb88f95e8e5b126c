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
//
// With pr.FromPublication (docs/policies.md#workfront, issue 53) the slots
// also move by pr.Delay (Retry-After, RetryAfterMoved), a slot after the
// retry window of a policy without a time-to-live is made at the window's
// end (at least the smallest gap after the last attempt, else the window
// ends the delivery), and a schedule that runs out after skipped slots ends
// with the window's reason (DeadlineStop), not MaxAttemptsExceeded: its
// attempts did not run out, its time did.
func (p Policy) NextSlot(pr Progress, seed uint64) (time.Time, int, Stop) {
	pr.Attempts += pr.Skipped
	if p.MaxAttempts > 0 && pr.Attempts-pr.Skipped >= p.MaxAttempts {
		return time.Time{}, 0, MaxAttemptsExceeded
	}
	if p.Schedule.Kind != Offsets {
		due, stop := p.Next(pr, seed)
		return due, 0, stop
	}
	origin := pr.FirstFailureAt
	if pr.FromPublication {
		origin = origin.Add(pr.Delay)
	}
	earliest := pr.LastFailureAt.Add(p.Schedule.smallestGap())
	for skipped := 0; ; skipped++ {
		wait, ok := p.Schedule.wait(pr.Attempts + skipped)
		if !ok {
			return time.Time{}, skipped, p.outOfSlots(pr, skipped)
		}
		if origin.Add(wait).Before(earliest) {
			continue // the slot passed, or is too close to the last attempt
		}
		due := origin.Add(p.jitter(wait, seed, pr.Attempts+skipped))
		if due.Before(pr.LastFailureAt) {
			due = pr.LastFailureAt
		}
		if p.TTL > 0 && due.After(pr.FirstAttemptAt.Add(p.TTL)) {
			return time.Time{}, skipped, TTLExceeded
		}
		return p.inWindow(pr, due, earliest, skipped)
	}
}

// outOfSlots is why a delivery whose offset schedule has no slot left ends:
// its attempts ran out, or, from pr.FromPublication, its time did when it
// skipped slots.
func (p Policy) outOfSlots(pr Progress, skipped int) Stop {
	if pr.FromPublication && pr.Skipped+skipped > 0 {
		return p.DeadlineStop()
	}
	return MaxAttemptsExceeded
}

// inWindow keeps a retry of a policy without a time-to-live in its retry
// window (from pr.FromPublication): a slot after the window's end is made
// at its end, unless that is closer to the last attempt than earliest.
func (p Policy) inWindow(pr Progress, due, earliest time.Time, skipped int) (time.Time, int, Stop) {
	if !pr.FromPublication || p.TTL > 0 {
		return due, skipped, NoStop
	}
	end := p.Deadline(pr)
	if end.IsZero() || !due.After(end) {
		return due, skipped, NoStop
	}
	if end.Before(earliest) {
		return time.Time{}, skipped, RetryWindowExceeded
	}
	return end, skipped, NoStop
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
