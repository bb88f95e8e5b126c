package policies

import (
	"hash/fnv"
	"math"
	"time"
)

// Stop says why a delivery gets no further retry. The values are Event Grid's
// dead-letter reasons, which every policy shares.
type Stop string

const (
	// NoStop: another retry is due.
	NoStop Stop = ""
	// MaxAttemptsExceeded: the policy's attempt limit (or its schedule) ran out.
	MaxAttemptsExceeded Stop = "MaxDeliveryAttemptsExceeded"
	// TTLExceeded: the next retry would come after the time-to-live.
	TTLExceeded Stop = "TimeToLiveExceeded"
	// RetryWindowExceeded: a policy without a time-to-live reached the end
	// of its retries' window (Workfront's 48 hours, docs/policies.md#workfront)
	// while its endpoint was disabled or frozen.
	RetryWindowExceeded Stop = "RetryWindowExceeded"
)

// DeadlineStop names the limit a delivery that waited for its endpoint
// reached: its time-to-live, or, for a policy without one, the window of
// its retries (Deadline).
func (p Policy) DeadlineStop() Stop {
	if p.TTL > 0 {
		return TTLExceeded
	}
	return RetryWindowExceeded
}

// Progress describes the deliveries a delivery workflow has made so far.
type Progress struct {
	// Attempts is the number of deliveries made (the first included).
	Attempts int
	// FirstAttemptAt is when the first delivery started.
	FirstAttemptAt time.Time
	// FirstFailureAt is when the first delivery was seen to fail.
	FirstFailureAt time.Time
	// LastFailureAt is when the latest delivery was seen to fail.
	LastFailureAt time.Time
	// Skipped counts the retry slots of an offset schedule that passed
	// while the delivery could not attempt (a wait, a worker outage): they
	// are not fired and not counted as attempts (docs/policies.md#common-rules).
	Skipped int
	// FromPublication turns on the rules of issue 53 (Delivery version 7):
	// the retry window of a policy without a time-to-live counts from
	// publication (windowStart), no retry of an offset schedule is due
	// after it, a schedule that runs out after skipped slots ends with the
	// window's reason, and a retry Retry-After moved later moves the later
	// slots with it (Delay). False: the rules deliveries started before
	// it run by.
	FromPublication bool
	// FirstStartedAt is when the first attempt actually made started: later
	// than FirstAttemptAt (publication) by the time it was held back (its
	// endpoint disabled, a late start). Zero before it.
	FirstStartedAt time.Time
	// Delay is how much later than their slots Retry-After moved retries of
	// an offset schedule: every later slot is that much later
	// (docs/policies.md#retry-after-and-the-schedules).
	Delay time.Duration
}

// maxWait is the longest wait a schedule may hold (about 146 years): half of
// the largest Duration, so that even a +50% jitter cannot overflow.
const maxWait = time.Duration(math.MaxInt64 / 2)

// Next returns when the next retry is due, or why there is none. seed makes
// the jitter deterministic: pass Seed(delivery id).
func (p Policy) Next(pr Progress, seed uint64) (time.Time, Stop) {
	retry := pr.Attempts // retry k follows attempt k (attempt 0 is the first)
	if p.MaxAttempts > 0 && pr.Attempts >= p.MaxAttempts {
		return time.Time{}, MaxAttemptsExceeded
	}
	wait, ok := p.Schedule.wait(retry)
	if !ok {
		return time.Time{}, MaxAttemptsExceeded
	}
	wait = p.jitter(wait, seed, retry)
	origin := pr.LastFailureAt
	if p.Schedule.Kind == Offsets {
		origin = pr.FirstFailureAt
	}
	due := origin.Add(wait)
	if due.Before(pr.LastFailureAt) {
		due = pr.LastFailureAt
	}
	if p.TTL > 0 && due.After(pr.FirstAttemptAt.Add(p.TTL)) {
		return time.Time{}, TTLExceeded
	}
	return due, NoStop
}

// wait is retry k's duration (k >= 1): a gap for most kinds, an offset from
// the first failure for Offsets. ok is false when the schedule has no retry k.
func (s Schedule) wait(k int) (time.Duration, bool) {
	if k < 1 {
		return 0, false
	}
	switch s.Kind {
	case Fixed:
		return s.Interval, true
	case Exponential:
		d := float64(s.Base) * math.Pow(s.Factor, float64(k-1))
		if s.Cap > 0 && d > float64(s.Cap) {
			return s.Cap, true
		}
		if d > float64(maxWait) {
			return maxWait, true // the float would overflow a Duration
		}
		return time.Duration(d), true
	default:
		if k <= len(s.Durations) {
			return s.Durations[k-1], true
		}
		if s.RepeatLast && len(s.Durations) > 0 && s.Kind == Gaps {
			return s.Durations[len(s.Durations)-1], true
		}
		return 0, false
	}
}

// JitterBounds returns the least and greatest wait jitter can make of d.
func (p Policy) JitterBounds(d time.Duration) (time.Duration, time.Duration) {
	j := time.Duration(float64(d) * p.JitterFraction)
	return d - j, d + j
}

// jitter moves d by up to ±JitterFraction, deterministically from seed and k.
func (p Policy) jitter(d time.Duration, seed uint64, k int) time.Duration {
	if p.JitterFraction <= 0 || d <= 0 {
		return d
	}
	r := splitmix64(seed ^ uint64(k)*0x9E3779B97F4A7C15)
	u := float64(r>>11)/float64(1<<53)*2 - 1 // uniform in [-1, 1)
	return d + time.Duration(u*p.JitterFraction*float64(d)).Truncate(time.Millisecond)
}

// Seed derives a jitter seed from a delivery's identity.
func Seed(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}

func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
