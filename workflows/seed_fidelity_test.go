package workflows_test

import (
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv/durations"
	"github.com/hookrelay/hookrelay/workflows"
)

// retryAfterOn makes f's receiver ask, with Retry-After, for value on its
// n-th answer only.
func (f *fixture) retryAfterOn(n int, value string) {
	f.recv.mu.Lock()
	defer f.recv.mu.Unlock()
	f.recv.retryAfter = func(i int) string {
		if i == n {
			return value
		}
		return ""
	}
}

// TestWorkfrontRetryAfterUsesUpNoAttempts: issue 53,
// docs/policies.md#retry-after-and-the-schedules. Every attempt fails with a
// 503; the answer to retry 1 asks for an hour with Retry-After. Retry 2
// comes an hour later, and the slots after it move with it: the delivery
// still makes its 12 deliveries (none skipped), each at least the schedule's
// gap after the one before, and ends MaxDeliveryAttemptsExceeded. Before,
// retries 3 to 5 were skipped as passed and it ended after 9 of 12.
func TestWorkfrontRetryAfterUsesUpNoAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusServiceUnavailable))
	f.retryAfterOn(1, "3600")
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 12, reason: string(policies.MaxAttemptsExceeded)})
	at := startOffsets(out.starts)
	if len(at) != 12 {
		t.Fatalf("%d attempts made, want 12", len(at))
	}
	// The activity reads Retry-After on the wall clock, which the
	// time-skipping environment outruns: retry 2 is about an hour after the
	// first attempt, not after retry 1.
	if at[2] < time.Hour-time.Minute {
		t.Errorf("retry 2 came %v after the first attempt, want the hour Retry-After asked for", at[2])
	}
	offsets := workfrontOffsets()
	for k := 3; k <= 10; k++ {
		if d, want := at[k]-at[k-1], offsets[k-1]-offsets[k-2]; d < want-time.Second {
			t.Errorf("retry %d came %v after retry %d, want the schedule's %v", k, d, k-1, want)
		}
	}
	if last := at[11]; last > offsets[10]+time.Second {
		t.Errorf("retry 11 at %v after the first attempt, past the 48-hour window (%v)", last, offsets[10])
	}
}

// TestRetryAfterTurnedOff: issue 53. retry_policy.honor_retry_after false:
// the hour asked for is ignored and every retry comes at its slot.
func TestRetryAfterTurnedOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, `{"honor_retry_after": false, "max_attempts": 4}`,
		always(http.StatusServiceUnavailable))
	f.retryAfterOn(1, "3600")
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 4, reason: string(policies.MaxAttemptsExceeded),
		timers: durations.List(84.8, 169.6, 339.2)})
}

// TestWorkfrontWindowCountsFromPublication: issue 53, docs/policies.md#workfront.
// The endpoint is disabled when the event is published; it is enabled
// again 40 hours later and every attempt fails. The 48 hours count from
// publication, not from the first failure: the retries up to 46 hours come
// at their slots, the last is made when the window ends (173,585.6 s after
// publication), and the delivery ends RetryWindowExceeded after 10
// attempts. Before, it got a fresh 48 hours from its first failure (12
// attempts, up to 88 hours after publication).
func TestWorkfrontWindowCountsFromPublication(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusInternalServerError))
	f.setEndpointState(t, "disabled")
	var published time.Time
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		published = env.Now()
		env.RegisterDelayedCallback(func() {
			f.setEndpointState(t, "enabled")
			env.SignalWorkflow(workflows.SignalRelease, nil)
		}, 40*time.Hour)
	})
	f.check(t, out, want{status: "dead_lettered", attempts: 10, reason: string(policies.RetryWindowExceeded)})
	window := published.Add(durations.Secs(173585.6))
	if last := out.starts[len(out.starts)-1]; last.After(window.Add(time.Second)) || last.Before(window.Add(-time.Second)) {
		t.Errorf("last attempt %v after publication, want at the window's end (%v)", last.Sub(published), window.Sub(published))
	}
}

// TestWorkfrontSkippedSlotsEndByWindow: issue 53, docs/policies.md#workfront.
// The first attempt fails; the endpoint is disabled before retry 1 and
// enabled again after 47 hours. The released attempt fails, retries 2 to
// 10 are skipped (docs/policies.md#no-catch-up-bursts), retry 11 comes at
// its slot, and the delivery ends after 3 attempts because its window is
// over (RetryWindowExceeded), not MaxDeliveryAttemptsExceeded: its attempts
// did not run out.
func TestWorkfrontSkippedSlotsEndByWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusInternalServerError))
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { f.setEndpointState(t, "disabled") }, time.Minute)
		env.RegisterDelayedCallback(func() {
			f.setEndpointState(t, "enabled")
			env.SignalWorkflow(workflows.SignalRelease, nil)
		}, 47*time.Hour)
	})
	f.check(t, out, want{status: "dead_lettered", attempts: 3, reason: string(policies.RetryWindowExceeded)})
	// Four starts: retry 1 at 84.8 s found the endpoint disabled.
	if got := startOffsets(out.starts); len(got) != 4 || got[3] < durations.Secs(173585.6)-time.Second {
		t.Errorf("attempts at %v after the first, want the last at retry 11's slot (173,585.6 s)", got)
	}
}
