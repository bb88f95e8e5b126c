package policies

import (
	"testing"
	"time"
)

// run simulates a delivery under p whose attempts all fail at once, the
// first at start, under the rules of issue 53 (FromPublication) or those
// before; published is when it was stored. retryAfter[k] is the Retry-After
// the answer to attempt k asks for. It returns when each attempt was made
// and why the delivery ended.
func run(p Policy, published, start time.Time, fromPublication bool, retryAfter map[int]time.Duration) ([]time.Time, Stop) {
	pr := Progress{FirstAttemptAt: published, FromPublication: fromPublication}
	at := start
	var made []time.Time
	for {
		made = append(made, at)
		if pr.Attempts == 0 && fromPublication {
			pr.FirstStartedAt = at
		}
		pr.Attempts++
		if pr.FirstFailureAt.IsZero() {
			pr.FirstFailureAt = at
		}
		pr.LastFailureAt = at
		due, skipped, stop := p.NextSlot(pr, 1)
		pr.Skipped += skipped
		if stop != NoStop {
			return made, stop
		}
		if ra, ok := retryAfter[pr.Attempts-1]; ok {
			moved := p.RetryAfterDue(due, at, at.Add(ra), p.Deadline(pr))
			if fromPublication {
				pr = p.RetryAfterMoved(pr, due, moved)
			}
			due = moved
		}
		at = due
	}
}

// TestRetryAfterUsesUpNoAttempts: docs/policies.md#retry-after-and-the-schedules.
// One Retry-After of an hour, on the answer to Workfront's retry 1, moves
// retry 2 an hour later and every later slot with it: 12 deliveries, the
// last at the window's end (173,585.6 s), MaxDeliveryAttemptsExceeded. Under
// the rules before (FromPublication false) the passed slots were skipped and
// it ended after 9. SAP keeps its 6; a gap schedule (Event Grid) loses
// none to skipping, only the hour of its time-to-live the wait took.
// honor_retry_after false ignores it.
func TestRetryAfterUsesUpNoAttempts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	hour := map[int]time.Duration{1: time.Hour}
	off, err := Resolve(NameWorkfront, Overrides{HonorRetryAfter: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		p        Policy
		issue53  bool
		attempts int
		stop     Stop
		last     time.Duration
	}{
		{"workfront: 12 deliveries, the last at the window's end", Workfront(), true, 12, MaxAttemptsExceeded, secs(173585.6)},
		{"workfront before issue 53: 9 of 12", Workfront(), false, 9, MaxAttemptsExceeded, secs(173585.6)},
		{"workfront, honor_retry_after false: the schedule", off, true, 12, MaxAttemptsExceeded, secs(173585.6)},
		{"sap: 6 deliveries, the last at the window's end", SAP(), true, 6, MaxAttemptsExceeded, secs(32768)},
		{"eventgrid: gaps count from the last failure; the hour used up the 24 h TTL", EventGrid(), true, 29, TTLExceeded, 0},
	}
	for _, c := range cases {
		made, stop := run(c.p, t0, t0, c.issue53, hour)
		if len(made) != c.attempts || stop != c.stop {
			t.Errorf("%s: %d attempts, %s; want %d, %s", c.name, len(made), stop, c.attempts, c.stop)
			continue
		}
		if last := made[len(made)-1].Sub(t0); c.last > 0 && (last < c.last-time.Second || last > c.last) {
			t.Errorf("%s: last attempt at %v, want %v", c.name, last, c.last)
		}
	}
	if off.RetryAfterMax != 0 || off.RetryAfterDue(t0, t0, t0.Add(time.Hour), time.Time{}) != t0 {
		t.Errorf("honor_retry_after false: RetryAfterMax %v", off.RetryAfterMax)
	}
}

// TestWindowCountsFromPublication: docs/policies.md#workfront. A delivery
// held 40 hours before its first attempt (its endpoint disabled) keeps the
// window of its publication: retries up to retry 8 (46 h) at their slots,
// one more at the window's end (173,585.6 s after publication), then
// RetryWindowExceeded, 10 deliveries. Before, the 48 hours started again
// at the first failure: 12 deliveries, the last 88 hours after publication.
// A delivery sent at once keeps all 12, the last at its slot.
func TestWindowCountsFromPublication(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	held := t0.Add(40 * time.Hour)
	cases := []struct {
		name     string
		start    time.Time
		issue53  bool
		attempts int
		stop     Stop
		last     time.Time
	}{
		{"held 40 h: the window of its publication", held, true, 10, RetryWindowExceeded, t0.Add(secs(173585.6))},
		{"held 40 h, before issue 53: a fresh 48 h", held, false, 12, MaxAttemptsExceeded, held.Add(secs(173585.6))},
		{"sent at once: every slot", t0, true, 12, MaxAttemptsExceeded, t0.Add(secs(173585.6))},
	}
	for _, c := range cases {
		made, stop := run(Workfront(), t0, c.start, c.issue53, nil)
		if len(made) != c.attempts || stop != c.stop || !made[len(made)-1].Equal(c.last) {
			t.Errorf("%s: %d attempts, last at %v, %s; want %d, %v, %s", c.name, len(made),
				made[len(made)-1].Sub(t0), stop, c.attempts, c.last.Sub(t0), c.stop)
		}
	}
}

// TestSkippedSlotsEndByWindow: docs/policies.md#workfront and
// #no-catch-up-bursts. A delivery released 47 hours after its first failure
// skips retries 2 to 10 and makes retry 11 at its slot; the schedule then
// has no slot left, and it ends RetryWindowExceeded (its time ran out), not
// MaxDeliveryAttemptsExceeded after 3 of 12 attempts. The rules before
// named the attempts.
func TestSkippedSlotsEndByWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		issue53 bool
		want    Stop
	}{{true, RetryWindowExceeded}, {false, MaxAttemptsExceeded}} {
		pr := Progress{Attempts: 3, Skipped: 9, FirstAttemptAt: t0, FirstStartedAt: t0, FirstFailureAt: t0,
			LastFailureAt: t0.Add(secs(173585.6)), FromPublication: c.issue53}
		if _, _, stop := Workfront().NextSlot(pr, 1); stop != c.want {
			t.Errorf("issue 53 rules %v: %s, want %s", c.issue53, stop, c.want)
		}
	}
}

// TestQueueMode: docs/policies.md#sap. An account in queue mode pushes
// once: after one failed attempt, or a dead-letter code, the delivery ends
// queued and its subscription stays active; retry mode's queueing
// deactivates it, as do deliveries that do not say how they end.
func TestQueueMode(t *testing.T) {
	t.Parallel()
	p := SAP()
	p.DeadLetterCodes = []int{410}
	q := p.QueueMode()
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	pr := Progress{Attempts: 1, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: t0, FromPublication: true}
	if _, _, stop := q.NextSlot(pr, 1); stop != MaxAttemptsExceeded {
		t.Errorf("after one push: %s, want no retry", stop)
	}
	if q.FinalStatus() != StatusQueued || q.UndeliverableStatus() != StatusQueued || q.Classify(410) != Undeliverable {
		t.Errorf("queue mode ends %s / %s", q.FinalStatus(), q.UndeliverableStatus())
	}
	if q.RetryAfterMax != 0 || q.TTL != 0 || !q.Deadline(pr).Equal(t0) {
		t.Errorf("queue mode waits: Retry-After up to %v, deadline %v", q.RetryAfterMax, q.Deadline(pr))
	}
	for _, c := range []struct {
		how  Exhausted
		want bool
	}{{Queue, false}, {DeactivateAndQueue, true}, {"", true}} {
		if got := DeactivatesSubscription(StatusQueued, c.how); got != c.want {
			t.Errorf("queued under %q deactivates: %v, want %v", c.how, got, c.want)
		}
	}
	if _, err := Resolve(NameSAP, Overrides{OnExhausted: ptr(Queue)}); err == nil {
		t.Error("on_exhausted queue accepted in a retry_policy: only queue mode sets it")
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
