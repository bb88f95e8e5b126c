package policies

import (
	"testing"
	"time"
)

// TestRetryAfterDue: a receiver's Retry-After (429 or 503) pushes the next
// retry back, bounded by the policy's RetryAfterMax and never past the
// delivery's deadline (issue 16;
// docs/endpoints.md#receiver-protection-retry-after-concurrency-cap-rate-limit).
func TestRetryAfterDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	custom := Policy{RetryAfterMax: time.Hour}
	cases := []struct {
		name       string
		p          Policy
		due        time.Time
		retryAfter time.Duration // from now; zero: none
		deadline   time.Time
		want       time.Time
	}{
		{"later than the schedule: honoured", custom, at(time.Second), 3 * time.Second, time.Time{}, at(3 * time.Second)},
		{"earlier than the schedule: the schedule", custom, at(time.Minute), 3 * time.Second, time.Time{}, at(time.Minute)},
		{"none", custom, at(time.Second), 0, time.Time{}, at(time.Second)},
		{"bounded by the policy", custom, at(time.Second), 5 * time.Hour, time.Time{}, at(time.Hour)},
		{"never past the deadline", custom, at(time.Second), 30 * time.Minute, at(10 * time.Minute), at(10 * time.Minute)},
		{"ignored without a bound", Policy{}, at(time.Second), time.Minute, time.Time{}, at(time.Second)},
		{"Event Grid: at most an hour", EventGrid(), at(10 * time.Second), 2 * time.Hour, time.Time{}, at(time.Hour)},
		{"Event Grid on IoT Edge: at most ten minutes", EventGridEdge(), at(time.Minute), time.Hour, time.Time{}, at(10 * time.Minute)},
		{"Workfront 2017: at most ten minutes", WorkfrontLegacy(), at(time.Minute), time.Hour, time.Time{}, at(10 * time.Minute)},
	}
	for _, c := range cases {
		var asked time.Time
		if c.retryAfter > 0 {
			asked = now.Add(c.retryAfter)
		}
		if got := c.p.RetryAfterDue(c.due, now, asked, c.deadline); !got.Equal(c.want) {
			t.Errorf("%s: due %v, want %v", c.name, got.Sub(now), c.want.Sub(now))
		}
	}
}

// TestEveryPolicyBoundsRetryAfter: every vendor policy and a custom one
// honour Retry-After up to a stated bound.
func TestEveryPolicyBoundsRetryAfter(t *testing.T) {
	for _, name := range Names() {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.RetryAfterMax <= 0 || p.Doc().RetryAfterMaxSeconds != p.RetryAfterMax.Seconds() {
			t.Errorf("%s: RetryAfterMax %v", name, p.RetryAfterMax)
		}
	}
	c, err := Custom{Kind: Fixed, IntervalSeconds: 1}.Policy()
	if err != nil || c.RetryAfterMax != time.Hour {
		t.Errorf("custom: %v %v", c.RetryAfterMax, err)
	}
}

// TestThrottleWait: a held-back delivery waits for the hint or a doubling
// back-off, whichever is longer, plus up to half again.
func TestThrottleWait(t *testing.T) {
	cases := []struct {
		hint     time.Duration
		n        int
		min, max time.Duration
	}{
		{0, 1, 250 * time.Millisecond, 375 * time.Millisecond},
		{0, 3, time.Second, 1500 * time.Millisecond},
		{0, 50, 10 * time.Second, 15 * time.Second},
		{2 * time.Second, 1, 2 * time.Second, 3 * time.Second},
	}
	for _, c := range cases {
		for seed := uint64(0); seed < 100; seed++ {
			if got := ThrottleWait(c.hint, c.n, seed); got < c.min || got > c.max {
				t.Fatalf("ThrottleWait(%v, %d, %d) = %v, want within [%v, %v]", c.hint, c.n, seed, got, c.min, c.max)
			}
		}
	}
	if ThrottleWait(0, 1, 1) == ThrottleWait(0, 1, 2) && ThrottleWait(0, 1, 3) == ThrottleWait(0, 1, 4) {
		t.Error("waits do not spread")
	}
}
