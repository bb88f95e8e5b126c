package policies

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/testenv/durations"
)

// t0 is the first attempt (and, failing instantly, the first failure).
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// ptr returns a pointer to v, for Overrides.
func ptr[T any](v T) *T { return &v }

// simulate runs p with every attempt failing instantly at its due time. It
// returns each retry's offset from the first failure and why retries stopped.
func simulate(t *testing.T, p Policy, seed uint64) ([]time.Duration, Stop) {
	t.Helper()
	pr := Progress{Attempts: 1, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: t0}
	var offsets []time.Duration
	for len(offsets) <= 200 {
		due, stop := p.Next(pr, seed)
		if stop != NoStop {
			return offsets, stop
		}
		if due.Before(pr.LastFailureAt) {
			t.Fatalf("%s: retry %d due %v, before the previous failure %v", p.Name, pr.Attempts, due, pr.LastFailureAt)
		}
		offsets = append(offsets, due.Sub(t0))
		pr.Attempts++
		pr.LastFailureAt = due
	}
	t.Fatalf("%s: more than 200 retries", p.Name)
	return nil, NoStop
}

// gapsOf turns offsets from the first failure into gaps between attempts.
func gapsOf(offsets []time.Duration) []time.Duration {
	gaps := make([]time.Duration, len(offsets))
	var prev time.Duration
	for i, o := range offsets {
		gaps[i], prev = o-prev, o
	}
	return gaps
}

// mustResolve resolves a policy or fails the test.
func mustResolve(t *testing.T, name string, o Overrides) Policy {
	t.Helper()
	p, err := Resolve(name, o)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", name, err)
	}
	return p
}

// eventGridGaps are Event Grid's 29 nominal gaps (docs/policies.md#eventgrid):
// 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, then hourly.
func eventGridGaps() []time.Duration {
	gaps := durations.List(10, 30, 60, 300, 600, 1800, 3600)
	return append(gaps, durations.Repeat(time.Hour, 22)...)
}

// TestVendorSchedules lists every delay of every vendor policy, driving
// Policy.Next with a Progress that advances as each attempt fails instantly.
func TestVendorSchedules(t *testing.T) {
	t.Parallel()
	noJitter := mustResolve(t, NameEventGrid, Overrides{JitterFraction: ptr(0.0)})
	edgeGaps := append(durations.List(60), durations.Repeat(10*time.Minute, 11)...)
	cases := []struct {
		cite        string
		policy      Policy
		offsets     []time.Duration // retry k's offset from the first failure (offset policies)
		gaps        []time.Duration // retry k's gap after the previous failure (gap policies)
		stop        Stop
		maxAttempts int
	}{
		{"docs/policies.md#workfront: retry k at (2^k-1)*84.8 s after the first failure; 12 deliveries",
			Workfront(), durations.List(84.8, 254.4, 593.6, 1272, 2628.8, 5342.4, 10769.6, 21624, 43332.8, 86750.4, 173585.6),
			nil, MaxAttemptsExceeded, 12},
		{"docs/policies.md#workfront-legacy: every 10 minutes, at most 12 retries",
			WorkfrontLegacy(), nil, durations.Repeat(10*time.Minute, 12), MaxAttemptsExceeded, 13},
		{"docs/policies.md#sap: retry x at 2^(3x) s after the original failure, 5 retries",
			SAP(), durations.List(8, 64, 512, 4096, 32768), nil, MaxAttemptsExceeded, 6},
		{"docs/policies.md#eventgrid: 10s, 30s, 1m, 5m, 10m, 30m, 1h, then hourly; 30 attempts (jitter off)",
			noJitter, nil, eventGridGaps(), MaxAttemptsExceeded, 30},
		{"docs/policies.md#eventgrid-edge: 1 min, then 10 min; the 7,200 s TTL cuts it after retry 12 (13 deliveries, not 30)",
			EventGridEdge(), nil, edgeGaps, TTLExceeded, 30},
	}
	for _, c := range cases {
		t.Run(c.policy.Name, func(t *testing.T) {
			got, stop := simulate(t, c.policy, Seed("d-1"))
			want := c.offsets
			if c.gaps != nil {
				got, want = gapsOf(got), c.gaps
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s\n got %v\nwant %v", c.cite, got, want)
			}
			if stop != c.stop || c.policy.MaxAttempts != c.maxAttempts {
				t.Errorf("%s: stop %q max %d, want %q max %d", c.cite, stop, c.policy.MaxAttempts, c.stop, c.maxAttempts)
			}
		})
	}
}

// TestVendorLimits checks each vendor's other numbers (docs/policies.md, per section).
func TestVendorLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite          string
		p             Policy
		ttl, timeout  time.Duration
		jitter        float64
		deadLettering bool
		final         string
	}{
		{"docs/policies.md#workfront: 5 s to respond (Adobe's FAQ), dead-lettered instead of dropped", Workfront(), 0, 5 * time.Second, 0, true, "dead_lettered"},
		{"docs/policies.md#workfront-legacy: 5 s to respond, dead-lettered here", WorkfrontLegacy(), 0, 5 * time.Second, 0, true, "dead_lettered"},
		{"docs/policies.md#sap: deactivated, events queued", SAP(), 0, 30 * time.Second, 0, false, "queued"},
		{"docs/policies.md#eventgrid: 30 s to respond, 1440 min TTL, dead-lettering off (dropped)", EventGrid(), 1440 * time.Minute, 30 * time.Second, 0.1, false, "dropped"},
		{"docs/policies.md#eventgrid-edge: 60 s to respond, 7200 s TTL, dead-lettered here", EventGridEdge(), 7200 * time.Second, 60 * time.Second, 0, true, "dead_lettered"},
	}
	for _, c := range cases {
		p := c.p
		if p.TTL != c.ttl || p.Timeout != c.timeout || p.JitterFraction != c.jitter ||
			p.DeadLettering != c.deadLettering || string(p.FinalStatus()) != c.final || p.Section == "" {
			t.Errorf("%s: got ttl %v timeout %v jitter %g dl %v final %q section %q", c.cite,
				p.TTL, p.Timeout, p.JitterFraction, p.DeadLettering, p.FinalStatus(), p.Section)
		}
	}
}

// TestEventGridJitter: every gap within ±10% of the nominal one, the same seed
// gives the same delays (docs/policies.md#eventgrid: "each with a small random
// jitter").
func TestEventGridJitter(t *testing.T) {
	t.Parallel()
	p := EventGrid()
	nominal := eventGridGaps()
	for _, id := range []string{"a", "b", "delivery-42"} {
		first, _ := simulate(t, p, Seed(id))
		again, _ := simulate(t, p, Seed(id))
		if !slices.Equal(first, again) {
			t.Fatalf("docs/policies.md#eventgrid: seed %q gave %v then %v", id, first, again)
		}
		for k, g := range gapsOf(first) {
			lo, hi := p.JitterBounds(nominal[k])
			if g < lo || g > hi {
				t.Errorf("docs/policies.md#eventgrid: seed %q retry %d gap %v outside [%v, %v]", id, k+1, g, lo, hi)
			}
		}
	}
}

// TestEventGridJitterSpread: different seeds spread the first gap over
// 9-11 s (docs/policies.md#eventgrid).
func TestEventGridJitterSpread(t *testing.T) {
	t.Parallel()
	p := EventGrid()
	pr := Progress{Attempts: 1, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: t0}
	seen := map[time.Duration]bool{}
	lo, hi, sum := time.Hour, time.Duration(0), time.Duration(0)
	const n = 1000
	for i := range n {
		due, _ := p.Next(pr, uint64(i))
		g := due.Sub(t0)
		seen[g] = true
		lo, hi, sum = min(lo, g), max(hi, g), sum+g
	}
	mean := sum / n
	if len(seen) < 700 || // ms resolution: about 787 of 2001 values expected
		lo < 9*time.Second || hi > 11*time.Second ||
		lo > durations.Secs(9.2) || hi < durations.Secs(10.8) || mean < durations.Secs(9.8) || mean > durations.Secs(10.2) {
		t.Errorf("docs/policies.md#eventgrid: %d distinct gaps in [%v, %v], mean %v", len(seen), lo, hi, mean)
	}
}

// TestEventGridTTLWithJitter: "whichever comes first ends the retries"
// (docs/policies.md#eventgrid). Nominally retry 29 is due at 85,600 s, 800 s
// inside the 24 h TTL, so positive jitter sometimes pushes it past the TTL.
func TestEventGridTTLWithJitter(t *testing.T) {
	t.Parallel()
	p := EventGrid()
	stops := map[Stop]int{}
	for i := range 500 {
		offsets, stop := simulate(t, p, Seed(fmt.Sprintf("delivery-%d", i)))
		stops[stop]++
		if last := offsets[len(offsets)-1]; last > p.TTL {
			t.Fatalf("retry %d at %v, after the TTL", len(offsets), last)
		}
		if stop == MaxAttemptsExceeded && len(offsets) != 29 || stop == TTLExceeded && len(offsets) < 27 {
			t.Fatalf("stop %q after %d retries", stop, len(offsets))
		}
	}
	if stops[MaxAttemptsExceeded] == 0 || stops[TTLExceeded] == 0 {
		t.Errorf("docs/policies.md#eventgrid: want both limits to be reached over 500 seeds, got %v", stops)
	}
	t.Logf("eventgrid over 500 seeds: %v", stops)
}
