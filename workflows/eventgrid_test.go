package workflows_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// eventGridGaps are the nominal gaps of docs/policies.md#eventgrid: 10 s, 30 s,
// 1 min, 5 min, 10 min, 30 min, 1 h, then hourly; n of them.
func eventGridGaps(n int) []time.Duration {
	g := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
		10 * time.Minute, 30 * time.Minute, time.Hour}
	for len(g) < n {
		g = append(g, time.Hour)
	}
	return g[:n]
}

// checkJitter fails unless every timer lies within ±10% of its nominal gap,
// and unless the jitter moved at least one of them (the jitter is real).
func checkJitter(t *testing.T, p policies.Policy, timers []time.Duration) {
	t.Helper()
	nominal := eventGridGaps(len(timers))
	for i, d := range timers {
		lo, hi := p.JitterBounds(nominal[i])
		if d < lo || d > hi {
			t.Errorf("timer %d = %v, outside [%v, %v]", i, d, lo, hi)
		}
	}
	if len(timers) > 2 && slices.Equal(timers, nominal) {
		t.Errorf("timers %v carry no jitter", timers)
	}
}

// TestEventGridSuccessAfterFailures: docs/policies.md#eventgrid. Two failures
// then success, after jittered gaps of about 10 s and 30 s.
func TestEventGridSuccessAfterFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, "", failFirst(2, http.StatusServiceUnavailable))
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 3})
	if len(out.timers) != 2 {
		t.Fatalf("timers = %v, want 2", out.timers)
	}
	checkJitter(t, f.policy, out.timers)
}

// TestEventGridJitterDeterministic: docs/policies.md#eventgrid: each gap carries
// a small random jitter. It stays within ±10%, and is the same on a second
// run of the same delivery (a replay-safe seed from the delivery id), while
// another delivery gets other waits. With max_attempts 10 and dead-lettering
// off, the exhausted event is dropped (with a record).
func TestEventGridJitterDeterministic(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, `{"max_attempts": 10}`, always(http.StatusInternalServerError))
	out := f.run(t)
	f.check(t, out, want{status: "dropped", attempts: 10, reason: string(policies.MaxAttemptsExceeded)})
	if len(out.timers) != 9 {
		t.Fatalf("timers = %v, want 9", out.timers)
	}
	checkJitter(t, f.policy, out.timers)
	if got := f.scheduledOffsets(t); !slices.Equal(got, cumulative(out.timers)) {
		t.Errorf("scheduled_at offsets = %v, want %v", got, cumulative(out.timers))
	}
	f.reopen(t)
	again := f.run(t)
	if !slices.Equal(again.timers, out.timers) {
		t.Errorf("second run of the same delivery: timers %v, first run %v", again.timers, out.timers)
	}
	other := newFixtureOn(t, f.st, policies.NameEventGrid, `{"max_attempts": 10}`, always(http.StatusInternalServerError))
	if o := other.run(t); slices.Equal(o.timers, out.timers) {
		t.Errorf("two deliveries got the same jitter %v", o.timers)
	}
}

// TestEventGridDefaultLimits: docs/policies.md#eventgrid: retries go on until
// 30 attempts or 24 h, whichever comes first. The hourly tail puts the 30th
// attempt near 23.8 h, so the jitter of this delivery decides which limit
// ends it; either way the stop must agree with the waits.
func TestEventGridDefaultLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, "", always(http.StatusServiceUnavailable))
	out := f.run(t)
	checkJitter(t, f.policy, out.timers)
	offsets := cumulative(out.timers)
	total := offsets[len(offsets)-1]
	if total > 24*time.Hour {
		t.Errorf("last retry at %v, after the 24 h time-to-live", total)
	}
	switch out.res.Reason {
	case string(policies.MaxAttemptsExceeded):
		f.check(t, out, want{status: "dropped", attempts: 30, reason: out.res.Reason})
	case string(policies.TTLExceeded):
		if _, hi := f.policy.JitterBounds(time.Hour); total+hi <= 24*time.Hour || out.res.Attempts >= 30 {
			t.Errorf("TimeToLiveExceeded after %d attempts with the last at %v", out.res.Attempts, total)
		}
		f.check(t, out, want{status: "dropped", attempts: len(out.timers) + 1, reason: out.res.Reason})
	default:
		t.Fatalf("reason %q", out.res.Reason)
	}
}

// TestEventGridTimeToLiveOverride: docs/policies.md#eventgrid:
// eventTimeToLiveInMinutes cuts the retries short. With 2 minutes, retries
// at about 10 s, 40 s and 100 s fit; the next (about 400 s) does not.
func TestEventGridTimeToLiveOverride(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, `{"ttl_seconds": 120}`, always(http.StatusInternalServerError))
	out := f.run(t)
	f.check(t, out, want{status: "dropped", attempts: 4, reason: string(policies.TTLExceeded)})
	if len(out.timers) != 3 {
		t.Fatalf("timers = %v, want 3", out.timers)
	}
	checkJitter(t, f.policy, out.timers)
}

// TestEventGridBadRequestDeadLettered: docs/policies.md#eventgrid: with
// dead-lettering on, a 400 or 413 sends the event to the dead-letter store at
// once, without retries.
func TestEventGridBadRequestDeadLettered(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge} {
		f := newFixture(t, policies.NameEventGrid, `{"dead_lettering": true}`, always(code))
		out := f.run(t)
		f.check(t, out, want{status: "dead_lettered", attempts: 1,
			reason: fmt.Sprintf("Undeliverable: HTTP %d", code), timers: []time.Duration{}})
	}
}

// TestEventGridBadRequestDropped: docs/policies.md#eventgrid: dead-lettering is
// off by default; a 400 then drops the event at once (hookrelay keeps the
// record: the delivery row and its attempt) and makes no dead letter.
func TestEventGridBadRequestDropped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, "", always(http.StatusBadRequest))
	out := f.run(t)
	f.check(t, out, want{status: "dropped", attempts: 1, reason: "Undeliverable: HTTP 400", timers: []time.Duration{}})
}

// TestEventGridExhaustedDeadLettered: docs/policies.md#eventgrid: with
// dead-lettering on, an event whose retries are exhausted goes to the
// dead-letter store.
func TestEventGridExhaustedDeadLettered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGrid, `{"dead_lettering": true, "max_attempts": 3}`, always(http.StatusTooManyRequests))
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 3, reason: string(policies.MaxAttemptsExceeded)})
	if len(out.timers) != 2 {
		t.Fatalf("timers = %v, want 2", out.timers)
	}
	checkJitter(t, f.policy, out.timers)
}
