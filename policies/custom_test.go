package policies

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestCustomKinds drives each custom kind through Next (docs/policies.md#custom-policies:
// fixed interval, exponential, explicit gaps or offsets).
func TestCustomKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite        string
		c           Custom
		o           Overrides
		gaps        []time.Duration
		maxAttempts int
	}{
		{"fixed interval, 10 attempts by default", Custom{Kind: Fixed, IntervalSeconds: 30},
			Overrides{}, durations.Repeat(30*time.Second, 9), 10},
		{"exponential base 1 s, factor 2, cap 10 s", Custom{Kind: Exponential, BaseSeconds: 1, Factor: 2, CapSeconds: 10},
			Overrides{MaxAttempts: ptr(7)}, durations.List(1, 2, 4, 8, 10, 10), 7},
		{"exponential factor 1.5 without cap", Custom{Kind: Exponential, BaseSeconds: 2, Factor: 1.5},
			Overrides{MaxAttempts: ptr(4)}, durations.List(2, 3, 4.5), 4},
		{"gaps of 0.5 s, len+1 attempts", Custom{Kind: Gaps, Seconds: []float64{0.5, 0.5, 1}},
			Overrides{}, durations.List(0.5, 0.5, 1), 4},
		{"gaps with the last repeated, 10 attempts by default", Custom{Kind: Gaps, Seconds: []float64{0.5, 2}, RepeatLast: true},
			Overrides{}, append(durations.List(0.5), durations.Repeat(2*time.Second, 8)...), 10},
		{"offsets from the first failure", Custom{Kind: Offsets, Seconds: []float64{1, 5, 60}},
			Overrides{}, durations.List(1, 4, 55), 4},
		{"offsets cut by max attempts", Custom{Kind: Offsets, Seconds: []float64{1, 5, 60}},
			Overrides{MaxAttempts: ptr(2)}, durations.List(1), 2},
		{"TTL ends a fixed schedule", Custom{Kind: Fixed, IntervalSeconds: 0.5},
			Overrides{TTLSeconds: ptr(2)}, durations.Repeat(500*time.Millisecond, 4), 10},
	}
	for _, c := range cases {
		o := c.o
		o.Custom = &c.c
		p := mustResolve(t, NameCustom, o)
		offsets, _ := simulate(t, p, 3)
		if got := gapsOf(offsets); !slices.Equal(got, c.gaps) || p.MaxAttempts != c.maxAttempts {
			t.Errorf("docs/policies.md#custom-policies, %s:\n got %v max %d\nwant %v max %d", c.cite, got, p.MaxAttempts, c.gaps, c.maxAttempts)
		}
		if rows := p.Rows(); len(rows) != len(c.gaps)+1 {
			t.Errorf("docs/policies.md#custom-policies, %s: %d rows, want %d", c.cite, len(rows), len(c.gaps)+1)
		}
	}
}

// TestCustomDefaults: timeout 30 s, dead-lettered, no circuit breaker but 410
// Gone (docs/policies.md#common-rules).
func TestCustomDefaults(t *testing.T) {
	t.Parallel()
	p, err := Custom{Kind: Fixed, IntervalSeconds: 60}.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != NameCustom || p.Timeout != 30*time.Second || !p.DeadLettering || p.OnExhausted != DeadLetter ||
		p.Health != CustomHealth || p.JitterFraction != 0 || p.Description == "" || p.Section == "" {
		t.Errorf("docs/policies.md#custom-policies: defaults %+v", p)
	}
}

// TestCustomRejects: every invalid schedule is a FieldError on its field.
func TestCustomRejects(t *testing.T) {
	t.Parallel()
	long := make([]float64, 100)
	for i := range long {
		long[i] = float64(i + 1)
	}
	cases := []struct {
		c     Custom
		field string
	}{
		{Custom{}, "kind"},
		{Custom{Kind: "linear"}, "kind"},
		{Custom{Kind: Fixed}, "interval_seconds"},
		{Custom{Kind: Fixed, IntervalSeconds: -1}, "interval_seconds"},
		{Custom{Kind: Fixed, IntervalSeconds: math.NaN()}, "interval_seconds"},
		{Custom{Kind: Fixed, IntervalSeconds: math.Inf(1)}, "interval_seconds"},
		{Custom{Kind: Fixed, IntervalSeconds: 1, Seconds: []float64{1}}, "seconds"},
		{Custom{Kind: Exponential, Factor: 2}, "base_seconds"},
		{Custom{Kind: Exponential, BaseSeconds: 1}, "factor"},
		{Custom{Kind: Exponential, BaseSeconds: 1, Factor: 0.5}, "factor"},
		{Custom{Kind: Exponential, BaseSeconds: 1, Factor: math.Inf(1)}, "factor"},
		{Custom{Kind: Exponential, BaseSeconds: 10, Factor: 2, CapSeconds: 5}, "cap_seconds"},
		{Custom{Kind: Exponential, BaseSeconds: 1, Factor: 2, RepeatLast: true}, "repeat_last"},
		{Custom{Kind: Gaps}, "seconds"},
		{Custom{Kind: Gaps, Seconds: long}, "seconds"},
		{Custom{Kind: Gaps, Seconds: []float64{1, 0}}, "seconds[1]"},
		{Custom{Kind: Gaps, Seconds: []float64{1}, IntervalSeconds: 1}, "interval_seconds"},
		{Custom{Kind: Offsets, Seconds: []float64{5, 5}}, "seconds[1]"},
		{Custom{Kind: Offsets, Seconds: []float64{5, 1}}, "seconds[1]"},
		{Custom{Kind: Offsets, Seconds: []float64{1}, RepeatLast: true}, "repeat_last"},
	}
	for _, c := range cases {
		_, err := c.c.Policy()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "retry_policy.custom."+c.field {
			t.Errorf("docs/policies.md#custom-policies: %+v gave %v, want a FieldError on %s", c.c, err, c.field)
		}
	}
}

// TestCustomExponentialHuge: an uncapped exponential schedule saturates
// instead of overflowing into negative waits (fix in Schedule.wait).
func TestCustomExponentialHuge(t *testing.T) {
	t.Parallel()
	p := mustResolve(t, NameCustom, Overrides{MaxAttempts: ptr(100),
		Custom: &Custom{Kind: Exponential, BaseSeconds: 1, Factor: 10}})
	// Offsets beyond 292 years saturate time.Time.Sub, so check each gap.
	pr := Progress{Attempts: 1, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: t0}
	for ; pr.Attempts < 100; pr.Attempts++ {
		due, stop := p.Next(pr, 9)
		if g := due.Sub(pr.LastFailureAt); stop != NoStop || g <= 0 || g > maxWait {
			t.Fatalf("docs/policies.md#custom-policies: retry %d gap %v stop %q", pr.Attempts, g, stop)
		}
		pr.LastFailureAt = due
	}
	if _, stop := p.Next(pr, 9); stop != MaxAttemptsExceeded {
		t.Errorf("docs/policies.md#custom-policies: stop %q after 100 attempts", stop)
	}
	rows := p.Rows()
	if len(rows) != 100 || rows[99].Offset <= rows[98].Offset && rows[99].Offset != math.MaxInt64 {
		t.Errorf("docs/policies.md#custom-policies: rows %d, last offsets %v %v", len(rows), rows[98].Offset, rows[99].Offset)
	}
}
