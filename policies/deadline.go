package policies

import (
	"math"
	"time"
)

// Deadline returns the time after which a delivery can have no more retries,
// or the zero time when the policy sets no bound. With a TTL it is
// FirstAttemptAt+TTL (docs/policies.md#eventgrid: "whichever comes first ends the
// retries"). Otherwise, for a bounded schedule (Offsets, Gaps without
// RepeatLast, or MaxAttempts > 0), it is the latest the last allowed retry can
// be due when every attempt fails instantly: measured from FirstFailureAt, each
// wait at its upper jitter bound. For Workfront that is FirstFailureAt +
// 173,585.6 s (docs/policies.md#workfront: "their own 48-hour limit still runs").
// With pr.FromPublication that window counts from publication (windowStart).
func (p Policy) Deadline(pr Progress) time.Time {
	if p.TTL > 0 {
		return pr.FirstAttemptAt.Add(p.TTL)
	}
	last, ok := p.lastRetryBound()
	if !ok {
		return time.Time{}
	}
	return pr.windowStart().Add(last)
}

// windowStart is where the retry window of a policy without a time-to-live
// starts. Before pr.FromPublication, the first failure. From it, the window
// counts from publication (docs/policies.md#workfront): the first failure
// less the time the first attempt was held back after publication
// (FirstStartedAt - FirstAttemptAt), so a delivery whose first attempt went
// out at once keeps every slot, and one held back (its endpoint disabled)
// gets no fresh window from its first failure.
func (pr Progress) windowStart() time.Time {
	if !pr.FromPublication || pr.FirstStartedAt.IsZero() || pr.FirstFailureAt.Before(pr.FirstStartedAt) {
		return pr.FirstFailureAt
	}
	if held := pr.FirstStartedAt.Sub(pr.FirstAttemptAt); held > 0 {
		return pr.FirstFailureAt.Add(-held)
	}
	return pr.FirstFailureAt
}

// InternalGrace is the least time failures of hookrelay itself (not of the
// endpoint) may hold a delivery back before a count-bounded deadline ends it.
const InternalGrace = time.Hour

// InternalDeadline is how long failures of hookrelay itself, the first of
// them in a row at since, may hold a delivery back: its Deadline, but, unless
// the TTL sets that deadline, never less than InternalGrace after since. A
// count-bounded deadline is only where the last retry could fall (100
// attempts 0.2 s apart end 20 s after the first failure), and a worker's
// crash, found out when its attempt times out, must not end the delivery.
func (p Policy) InternalDeadline(pr Progress, since time.Time) time.Time {
	d := p.Deadline(pr)
	if d.IsZero() || p.TTL > 0 {
		return d
	}
	if grace := since.Add(InternalGrace); grace.After(d) {
		return grace
	}
	return d
}

// lastRetryBound is the greatest offset from the first failure at which the
// last allowed retry can be due; ok is false when retries are unbounded.
func (p Policy) lastRetryBound() (time.Duration, bool) {
	n, ok := p.retries()
	if !ok {
		return 0, false
	}
	if n == 0 {
		return 0, true
	}
	if p.Schedule.Kind == Offsets {
		w, _ := p.Schedule.wait(n)
		_, hi := p.JitterBounds(w)
		return hi, true
	}
	var total time.Duration
	for k := 1; k <= n; k++ {
		w, _ := p.Schedule.wait(k)
		_, hi := p.JitterBounds(w)
		total = satAdd(total, hi)
	}
	return total, true
}

// retries is the number of retries the policy allows, by MaxAttempts and by
// its schedule (TTL aside); ok is false when neither bounds them.
func (p Policy) retries() (int, bool) {
	n, ok := p.Schedule.retries()
	if p.MaxAttempts > 0 && (!ok || p.MaxAttempts-1 < n) {
		return p.MaxAttempts - 1, true
	}
	return n, ok
}

// retries is the number of retries the schedule holds; ok is false when it
// goes on for ever (Fixed, Exponential, Gaps with RepeatLast).
func (s Schedule) retries() (int, bool) {
	switch s.Kind {
	case Fixed, Exponential:
		return 0, false
	case Gaps:
		if s.RepeatLast && len(s.Durations) > 0 {
			return 0, false
		}
	}
	return len(s.Durations), true
}

// satAdd adds two non-negative durations, saturating at the largest Duration.
func satAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
