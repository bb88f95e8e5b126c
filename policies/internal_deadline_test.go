package policies

import (
	"testing"
	"time"
)

// TestInternalDeadline: failures of hookrelay itself get at least
// InternalGrace before a count-bounded deadline ends a delivery; a TTL's
// deadline stands (docs/policies.md#eventgrid: the event expires), a later
// count-bounded one (Workfront's 173,585.6 s, docs/policies.md#workfront)
// stands, and an unbounded policy has none.
func TestInternalDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	pr := Progress{FirstAttemptAt: t0, FirstFailureAt: t0}
	since := t0.Add(10 * time.Second)
	workfront, err := Resolve(NameWorkfront, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	fixed := Schedule{Kind: Fixed, Interval: 200 * time.Millisecond}
	for _, c := range []struct {
		name string
		p    Policy
		want time.Time
	}{
		{"100 attempts 0.2 s apart", Policy{Schedule: fixed, MaxAttempts: 100}, since.Add(InternalGrace)},
		{"a TTL", Policy{Schedule: fixed, MaxAttempts: 100, TTL: time.Minute}, t0.Add(time.Minute)},
		{"Workfront", workfront, t0.Add(173585600 * time.Millisecond)},
		{"unbounded", Policy{Schedule: fixed}, time.Time{}},
	} {
		if got := c.p.InternalDeadline(pr, since); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
