package workflows_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestCustomPolicies: docs/policies.md#custom-policies: a fixed interval,
// exponential (base, factor, cap), or an explicit list of gaps or offsets,
// with max attempts, which codes are success, which go straight to dead
// letter, and what happens when retries run out.
func TestCustomPolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, retryPolicy string
		script            func(int) int
		want              want
		active            bool
	}{
		{"gaps success after two failures", `{"custom": {"kind": "gaps", "seconds": [1, 2]}}`,
			failFirst(2, http.StatusServiceUnavailable),
			want{status: "delivered", attempts: 3, timers: durations.List(1, 2)}, true},
		{"gaps exhausted dead-lettered", `{"custom": {"kind": "gaps", "seconds": [1, 2]}}`,
			always(http.StatusInternalServerError),
			want{status: "dead_lettered", attempts: 3, reason: string(policies.MaxAttemptsExceeded), timers: durations.List(1, 2)}, true},
		{"offsets from the first failure", `{"custom": {"kind": "offsets", "seconds": [5, 20, 60]}}`,
			always(http.StatusInternalServerError),
			want{status: "dead_lettered", attempts: 4, reason: string(policies.MaxAttemptsExceeded), timers: durations.List(5, 15, 40)}, true},
		{"fixed interval, max attempts, drop", `{"custom": {"kind": "fixed", "interval_seconds": 30}, "max_attempts": 4, "on_exhausted": "drop", "dead_lettering": false}`,
			always(http.StatusBadGateway),
			want{status: "dropped", attempts: 4, reason: string(policies.MaxAttemptsExceeded), timers: durations.List(30, 30, 30)}, true},
		{"exponential with cap", `{"custom": {"kind": "exponential", "base_seconds": 1, "factor": 2, "cap_seconds": 5}, "max_attempts": 6}`,
			always(http.StatusInternalServerError),
			want{status: "dead_lettered", attempts: 6, reason: string(policies.MaxAttemptsExceeded), timers: durations.List(1, 2, 4, 5, 5)}, true},
		{"time-to-live", `{"custom": {"kind": "fixed", "interval_seconds": 10}, "ttl_seconds": 35}`,
			always(http.StatusInternalServerError),
			want{status: "dead_lettered", attempts: 4, reason: string(policies.TTLExceeded), timers: durations.List(10, 10, 10)}, true},
		{"own success codes", `{"custom": {"kind": "gaps", "seconds": [1, 1]}, "success_codes": [204]}`,
			func(n int) int { return []int{200, 202, 204}[n] },
			want{status: "delivered", attempts: 3, timers: durations.List(1, 1)}, true},
		{"dead letter code", `{"custom": {"kind": "gaps", "seconds": [1, 1]}, "dead_letter_codes": [410]}`,
			failFirst(1, http.StatusGone),
			want{status: "dead_lettered", attempts: 1, reason: "Undeliverable: HTTP 410", timers: []time.Duration{}}, true},
		{"deactivate and queue", `{"custom": {"kind": "gaps", "seconds": [3]}, "on_exhausted": "deactivate_and_queue"}`,
			always(http.StatusServiceUnavailable),
			want{status: "queued", attempts: 2, reason: string(policies.MaxAttemptsExceeded), timers: durations.List(3)}, false},
	}
	st := testStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureOn(t, st, policies.NameCustom, c.retryPolicy, c.script)
			out := f.run(t)
			f.check(t, out, c.want)
			if got := f.scheduledOffsets(t); !slices.Equal(got, cumulative(c.want.timers)) {
				t.Errorf("scheduled_at offsets = %v, want %v", got, cumulative(c.want.timers))
			}
			if f.active(t) != c.active {
				t.Errorf("subscription active = %v, want %v", !c.active, c.active)
			}
		})
	}
}

// TestCustomJitter: docs/policies.md#custom-policies: jitter. Each wait stays
// within ±jitter_fraction of its gap and repeats exactly on a second run of
// the same delivery.
func TestCustomJitter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameCustom, `{"custom": {"kind": "gaps", "seconds": [100], "repeat_last": true},
		"jitter_fraction": 0.3, "max_attempts": 6}`, always(http.StatusInternalServerError))
	out := f.run(t)
	f.check(t, out, want{status: "dead_lettered", attempts: 6, reason: string(policies.MaxAttemptsExceeded)})
	if len(out.timers) != 5 {
		t.Fatalf("timers = %v, want 5", out.timers)
	}
	moved := false
	for i, d := range out.timers {
		if d < 70*time.Second || d > 130*time.Second {
			t.Errorf("timer %d = %v, outside 100 s ± 30%%", i, d)
		}
		moved = moved || d != 100*time.Second
	}
	if !moved {
		t.Error("no timer carries jitter")
	}
	f.reopen(t)
	if again := f.run(t); !slices.Equal(again.timers, out.timers) {
		t.Errorf("second run: timers %v, first run %v", again.timers, out.timers)
	}
}
