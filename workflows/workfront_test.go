package workflows_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv/durations"
	"github.com/hookrelay/hookrelay/workflows"
)

// workfrontOffsets are retries 1..11 of docs/policies.md#workfront:
// (2^k - 1) * 84.8 s after the first failure.
func workfrontOffsets() []time.Duration {
	out := make([]time.Duration, 11)
	for k := 1; k <= 11; k++ {
		out[k-1] = time.Duration((1<<k)-1) * 84800 * time.Millisecond
	}
	return out
}

// TestWorkfrontSuccessAfterFailures: docs/policies.md#workfront. Two failures,
// then success: the retries come 84.8 s and 254.4 s after the first failure
// (timers of 84.8 s and 169.6 s), and the delivery ends delivered.
func TestWorkfrontSuccessAfterFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", failFirst(2, http.StatusServiceUnavailable))
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 3, timers: durations.List(84.8, 169.6)})
	if got, want := f.scheduledOffsets(t), durations.List(0, 84.8, 254.4); !slices.Equal(got, want) {
		t.Errorf("scheduled_at offsets = %v, want %v", got, want)
	}
}

// TestWorkfrontAllAttemptsFail: docs/policies.md#workfront. Every delivery fails:
// 12 deliveries, retry k at (2^k - 1) * 84.8 s after the first failure (the
// offset reading: timers 84.8 s, 169.6 s, 339.2 s, ... doubling), then a
// dead letter instead of the original's drop.
func TestWorkfrontAllAttemptsFail(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusInternalServerError))
	out := f.run(t)
	var timers []time.Duration
	for k := 0; k < 11; k++ {
		timers = append(timers, time.Duration(1<<k)*84800*time.Millisecond)
	}
	f.check(t, out, want{status: "dead_lettered", attempts: 12,
		reason: string(policies.MaxAttemptsExceeded), timers: timers})
	offsets := append([]time.Duration{0}, workfrontOffsets()...)
	if got := f.scheduledOffsets(t); !slices.Equal(got, offsets) {
		t.Errorf("scheduled_at offsets = %v\nwant %v", got, offsets)
	}
	if last := offsets[len(offsets)-1]; last != durations.Secs(173585.6) {
		t.Errorf("retry 11 at %v, want 173585.6 s (about 48.2 h)", last)
	}
}

// TestWorkfrontWaitingReleased: docs/policies.md#workfront, the circuit breaker.
// A delivery to a disabled URL makes no request and waits; it is bounded by
// its own 48-hour limit (a timer to the last retry's offset, 173,585.6 s);
// the release signal after the URL is re-enabled lets it deliver.
func TestWorkfrontWaitingReleased(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusOK))
	f.setEndpointState(t, "disabled")
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			if d := f.reload(t); d.Status != "waiting" || f.recv.requests() != 0 {
				t.Errorf("while disabled: status %q, %d requests; want waiting, 0", d.Status, f.recv.requests())
			}
			f.setEndpointState(t, "enabled")
			env.SignalWorkflow(workflows.SignalRelease, nil)
		}, time.Hour)
	})
	f.check(t, out, want{status: "delivered", attempts: 1, timers: durations.List(173585.6)})
	if got := f.scheduledOffsets(t); !slices.Equal(got, []time.Duration{0}) {
		t.Errorf("scheduled_at offsets = %v", got)
	}
}

// TestWorkfrontWaitingDeadline: docs/policies.md#workfront: "messages for a
// disabled or frozen URL wait; their own 48-hour limit still runs". A frozen
// URL that is never re-enabled: no request, and at the limit the delivery is
// dead-lettered, its reason naming that limit (RetryWindowExceeded: Workfront
// has no TTL, docs/policies.md#common-rules / issue 11).
func TestWorkfrontWaitingDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusOK))
	f.setEndpointState(t, "frozen")
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 0,
		reason: string(policies.RetryWindowExceeded), timers: durations.List(173585.6)})
}

// TestWorkfrontProbe: docs/policies.md#workfront: "a disabled URL is still
// tried, but only as a probe". A probe signal makes one attempt although the
// endpoint is still disabled; its success delivers the message.
func TestWorkfrontProbe(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusOK))
	f.setEndpointState(t, "disabled")
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalProbe, nil) }, 10*time.Minute)
	})
	f.check(t, out, want{status: "delivered", attempts: 1, timers: durations.List(173585.6)})
}

// TestWorkfrontLegacySuccessAfterFailures: docs/policies.md#workfront-legacy. A
// retry every 10 minutes: three failures, then success.
func TestWorkfrontLegacySuccessAfterFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfrontLegacy, "", failFirst(3, http.StatusBadGateway))
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 4, timers: durations.Repeat(10*time.Minute, 3)})
}

// TestWorkfrontLegacyAllAttemptsFail: docs/policies.md#workfront-legacy: at most
// 12 retries 10 minutes apart (two hours), then a permanent failure,
// dead-lettered here.
func TestWorkfrontLegacyAllAttemptsFail(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfrontLegacy, "", always(http.StatusInternalServerError))
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 13,
		reason: string(policies.MaxAttemptsExceeded), timers: durations.Repeat(10*time.Minute, 12)})
	offsets := f.scheduledOffsets(t)
	if last := offsets[len(offsets)-1]; last != 2*time.Hour {
		t.Errorf("last retry %v after the first attempt, want 2h", last)
	}
}

// TestWorkfrontScheduleSurvivesSlowBookkeeping: docs/policies.md#workfront:
// retry 1 is made 84.8 s after the first failure, even when recording the
// retrying status takes a while (here PostgreSQL rejects the first try and
// Temporal retries it a second later): the retry is not pushed back by it.
func TestWorkfrontScheduleSurvivesSlowBookkeeping(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", failFirst(1, http.StatusServiceUnavailable))
	failFirstRetryingUpdate(t, f)
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 2})
	if len(out.starts) != 2 {
		t.Fatalf("%d Deliver activities, want 2", len(out.starts))
	}
	if got := out.starts[1].Sub(out.starts[0]); got != durations.Secs(84.8) {
		t.Errorf("retry 1 made %v after the first failure, want 84.8s", got)
	}
}

// TestWorkfrontNoCatchUpAfterWait: docs/policies.md#no-catch-up-bursts
// (issue 11, item 2). A failing workfront delivery whose endpoint is
// disabled for 30 hours makes one overdue attempt when released; the slots
// that passed (retries 2 to 10) are skipped, not fired back to back, and the
// next attempt is retry 11's slot, 173,585.6 s after the first failure.
func TestWorkfrontNoCatchUpAfterWait(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusInternalServerError))
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { f.setEndpointState(t, "disabled") }, 10*time.Second)
		env.RegisterDelayedCallback(func() {
			f.setEndpointState(t, "enabled")
			env.SignalWorkflow(workflows.SignalRelease, nil)
		}, 30*time.Hour)
	})
	if out.res.Status != "dead_lettered" || out.res.Attempts != 3 {
		t.Fatalf("result %+v, want dead_lettered after 3 attempts (the first, the overdue one, retry 11)", out.res)
	}
	got := f.scheduledOffsets(t)
	if len(got) != 3 || got[1] < 30*time.Hour || got[2] != durations.Secs(173585.6) {
		t.Fatalf("scheduled_at offsets %v, want [0, 30h, 173585.6s]", got)
	}
}
