package workflows_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestEdgeSuccessAfterFailures: docs/policies.md#eventgrid-edge. The first
// failure waits 1 minute, any later one 10 minutes.
func TestEdgeSuccessAfterFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, "", failFirst(3, http.StatusServiceUnavailable))
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 4, timers: []time.Duration{time.Minute, 10 * time.Minute, 10 * time.Minute}})
}

// TestEdgeTimeToLiveEndsRetries: docs/policies.md#eventgrid-edge. With the
// default time-to-live of 7,200 s, retries at 60 s, 660 s, ..., 6,660 s fit
// and the next (7,260 s) does not: 13 deliveries, well under the 30-attempt
// limit, then a dead letter (the original drops the event).
func TestEdgeTimeToLiveEndsRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, "", always(http.StatusInternalServerError))
	out := f.run(t)
	timers := append([]time.Duration{time.Minute}, durations.Repeat(10*time.Minute, 11)...)
	f.check(t, out, want{status: "dead_lettered", attempts: 13, reason: string(policies.TTLExceeded), timers: timers})
	if got := f.scheduledOffsets(t); !slices.Equal(got, cumulative(timers)) {
		t.Errorf("scheduled_at offsets = %v", got)
	}
}

// TestEdgeMaxAttempts: docs/policies.md#eventgrid-edge: a subscription's own
// retryPolicy overrides the broker default; maxDeliveryAttempts 5 ends the
// retries before the time-to-live.
func TestEdgeMaxAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, `{"max_attempts": 5}`, always(http.StatusBadGateway))
	out := f.run(t)
	timers := append([]time.Duration{time.Minute}, durations.Repeat(10*time.Minute, 3)...)
	f.check(t, out, want{status: "dead_lettered", attempts: 5, reason: string(policies.MaxAttemptsExceeded), timers: timers})
}

// TestEdgeTimeToLiveOverride: docs/policies.md#eventgrid-edge: the
// subscription's eventExpiry (here ttl_seconds 3600) overrides the default:
// retries at 60 s ... 3,060 s fit, 3,660 s does not.
func TestEdgeTimeToLiveOverride(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, `{"ttl_seconds": 3600}`, always(http.StatusInternalServerError))
	out := f.run(t)
	timers := append([]time.Duration{time.Minute}, durations.Repeat(10*time.Minute, 5)...)
	f.check(t, out, want{status: "dead_lettered", attempts: 7, reason: string(policies.TTLExceeded), timers: timers})
}
