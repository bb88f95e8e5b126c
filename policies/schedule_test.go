package policies

import (
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestClassify maps status codes to verdicts (docs/policies.md#terms: success is
// any 2xx; docs/policies.md#eventgrid: 400 and 413 go to the dead-letter store at once).
func TestClassify(t *testing.T) {
	t.Parallel()
	eg, wf := EventGrid(), Workfront()
	only200 := mustResolve(t, NameWorkfront, Overrides{SuccessCodes: []int{200}})
	cases := []struct {
		cite   string
		p      Policy
		status int
		want   Verdict
	}{
		{"§eventgrid success code 200", eg, 200, Delivered},
		{"§eventgrid success code 202", eg, 202, Delivered},
		{"top: any 2xx", eg, 204, Delivered},
		{"§eventgrid 400 dead-letters at once", eg, 400, Undeliverable},
		{"§eventgrid 413 dead-letters at once", eg, 413, Undeliverable},
		{"§eventgrid no answer in time is a failure", eg, 0, Retry},
		{"§eventgrid failure code 401", eg, 401, Retry},
		{"§eventgrid failure code 404", eg, 404, Retry},
		{"§eventgrid failure code 408", eg, 408, Retry},
		{"§eventgrid failure code 414", eg, 414, Retry},
		{"§eventgrid failure code 429", eg, 429, Retry},
		{"§eventgrid failure code 500", eg, 500, Retry},
		{"§eventgrid failure code 503", eg, 503, Retry},
		{"§eventgrid failure code 504", eg, 504, Retry},
		{"§workfront has no dead-letter codes", wf, 400, Retry},
		{"§workfront 3xx is not success", wf, 302, Retry},
		{"§Custom policies: which codes are success", only200, 204, Retry},
		{"§Custom policies: which codes are success", only200, 200, Delivered},
	}
	for _, c := range cases {
		if got := c.p.Classify(c.status); got != c.want {
			t.Errorf("docs/policies.md %s: %s.Classify(%d) = %q, want %q", c.cite, c.p.Name, c.status, got, c.want)
		}
	}
}

// TestNextMeasuresFromTheRightOrigin: gaps run from the latest failure, offsets
// from the first (docs/policies.md#workfront, docs/policies.md#eventgrid-edge),
// and the TTL from the first attempt (docs/policies.md#eventgrid).
func TestNextMeasuresFromTheRightOrigin(t *testing.T) {
	t.Parallel()
	first := t0.Add(time.Minute) // the first attempt timed out after 60 s
	last := t0.Add(10 * time.Minute)
	pr := Progress{Attempts: 3, FirstAttemptAt: t0, FirstFailureAt: first, LastFailureAt: last}
	cases := []struct {
		cite string
		p    Policy
		want time.Time
		stop Stop
	}{
		{"§workfront: retry 3 at 593.6 s after the first failure", Workfront(), first.Add(durations.Secs(593.6)), NoStop},
		{"§eventgrid-edge: 10 min after any later failure", EventGridEdge(), last.Add(10 * time.Minute), NoStop},
		{"§sap: retry 3 at 512 s after the original failure, clamped to the last failure", SAP(), last, NoStop},
	}
	for _, c := range cases {
		got, stop := c.p.Next(pr, 1)
		if !got.Equal(c.want) || stop != c.stop {
			t.Errorf("docs/policies.md %s: got %v %q, want %v %q", c.cite, got, stop, c.want, c.stop)
		}
	}
	pr.LastFailureAt = t0.Add(7200*time.Second - 10*time.Minute + time.Second)
	if _, stop := EventGridEdge().Next(pr, 1); stop != TTLExceeded {
		t.Errorf("docs/policies.md#eventgrid-edge: TTL counts from the first attempt, got %q", stop)
	}
	pr.Attempts = 12
	if _, stop := Workfront().Next(pr, 1); stop != MaxAttemptsExceeded {
		t.Errorf("docs/policies.md#workfront: 12 deliveries at most, got %q", stop)
	}
}

// TestSeed: a delivery id always gives the same seed, different ids differ.
func TestSeed(t *testing.T) {
	t.Parallel()
	a, b := "d-1", "d-1"
	if Seed(a) != Seed(b) || Seed(a) == Seed("d-2") {
		t.Errorf("Seed is not a stable hash of the delivery id")
	}
}

// TestDeadline: the time after which no retry can come.
func TestDeadline(t *testing.T) {
	t.Parallel()
	pr := Progress{Attempts: 1, FirstAttemptAt: t0, FirstFailureAt: t0.Add(30 * time.Second), LastFailureAt: t0.Add(30 * time.Second)}
	jittered := mustResolve(t, NameCustom, Overrides{
		Custom: &Custom{Kind: Gaps, Seconds: []float64{10, 20}}, JitterFraction: ptr(0.1)})
	unbounded := mustResolve(t, NameCustom, Overrides{Custom: &Custom{Kind: Fixed, IntervalSeconds: 5}})
	unbounded.MaxAttempts = 0
	cases := []struct {
		cite string
		p    Policy
		want time.Time
	}{
		{"§workfront: the 48-hour limit, from the first failure", Workfront(), pr.FirstFailureAt.Add(durations.Secs(173585.6))},
		{"§workfront-legacy: 12 retries, 10 minutes apart", WorkfrontLegacy(), pr.FirstFailureAt.Add(2 * time.Hour)},
		{"§sap: retry 5 at 32,768 s", SAP(), pr.FirstFailureAt.Add(32768 * time.Second)},
		{"§eventgrid: 1440 min from the first attempt", EventGrid(), t0.Add(24 * time.Hour)},
		{"§eventgrid-edge: 7200 s from the first attempt", EventGridEdge(), t0.Add(7200 * time.Second)},
		{"§Custom policies: gaps at their upper jitter bound", jittered, pr.FirstFailureAt.Add(33 * time.Second)},
		{"§Custom policies: no limit at all", unbounded, time.Time{}},
	}
	for _, c := range cases {
		if got := c.p.Deadline(pr); !got.Equal(c.want) {
			t.Errorf("docs/policies.md %s: Deadline = %v, want %v", c.cite, got, c.want)
		}
	}
}

// TestDeadlineBoundsNext: no jittered retry is due after the Deadline.
func TestDeadlineBoundsNext(t *testing.T) {
	t.Parallel()
	p := mustResolve(t, NameCustom, Overrides{
		Custom: &Custom{Kind: Exponential, BaseSeconds: 1, Factor: 3}, JitterFraction: ptr(0.5)})
	deadline := p.Deadline(Progress{FirstAttemptAt: t0, FirstFailureAt: t0})
	for i := range 200 {
		offsets, _ := simulate(t, p, uint64(i))
		if last := t0.Add(offsets[len(offsets)-1]); last.After(deadline) {
			t.Fatalf("docs/policies.md#custom-policies: seed %d retry due %v, after the deadline %v", i, last, deadline)
		}
	}
}
