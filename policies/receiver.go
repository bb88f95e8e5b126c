package policies

import "time"

// RetryAfterDue is when the next retry is due once the receiver asked, with
// Retry-After on a 429 or 503 answer, not to be tried before retryAfter
// (issue 16): the later of the schedule's due and retryAfter, at most the
// policy's RetryAfterMax after now and never past deadline (zero: none). A
// policy with no RetryAfterMax, or a zero retryAfter, keeps due.
func (p Policy) RetryAfterDue(due, now, retryAfter, deadline time.Time) time.Time {
	if p.RetryAfterMax <= 0 || retryAfter.IsZero() {
		return due
	}
	at := retryAfter
	if most := now.Add(p.RetryAfterMax); at.After(most) {
		at = most
	}
	if !deadline.IsZero() && at.After(deadline) {
		at = deadline
	}
	if at.After(due) {
		return at
	}
	return due
}

// RetryAfterMoved is pr once Retry-After moved the retry due at due to
// moved (RetryAfterDue): on an offset schedule every later slot moves with
// it (Delay), so that the move uses up none of the retries after it
// (docs/policies.md#retry-after-and-the-schedules). Schedules of gaps count
// from the last failure and need nothing.
func (p Policy) RetryAfterMoved(pr Progress, due, moved time.Time) Progress {
	if p.Schedule.Kind == Offsets && moved.After(due) {
		pr.Delay += moved.Sub(due)
	}
	return pr
}

// Waits of a delivery held back by its endpoint's concurrency cap or rate
// limit (ThrottleWait).
const (
	throttleMin = 250 * time.Millisecond
	throttleMax = 10 * time.Second
)

// ThrottleWait is how long a delivery held back for the n-th time in a row
// (from 1) by its endpoint's limits waits before it asks again: hint (when
// room is expected, zero when unknown) or, when longer, 250 ms doubling to
// 10 s; then up to half again, deterministically from seed, so that waiting
// deliveries do not all ask at once. Holding back is not an attempt.
func ThrottleWait(hint time.Duration, n int, seed uint64) time.Duration {
	backoff := min(throttleMin<<min(max(n-1, 0), 6), throttleMax)
	wait := max(hint, backoff)
	r := splitmix64(seed ^ uint64(n)*0x9E3779B97F4A7C15)
	return wait + time.Duration(float64(wait/2)*float64(r>>11)/float64(1<<53))
}
