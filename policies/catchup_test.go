package policies

import (
	"testing"
	"time"
)

// TestNoCatchUpBursts: docs/policies.md#no-catch-up-bursts. A workfront
// delivery whose endpoint was disabled for 30 hours makes one overdue attempt
// when released; the retry slots that passed meanwhile (2 to 9: 254.4 s to
// 21,624 s after the first failure) are skipped, not fired back to back, and
// the next retry is the first slot still at least 84.8 s (the smallest gap)
// away: retry 11, at 173,585.6 s. Without a wait the schedule is unchanged
// (docs/policies.md#workfront).
func TestNoCatchUpBursts(t *testing.T) {
	t.Parallel()
	p := Workfront()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cases := []struct {
		name        string
		attempts    int
		last        time.Time
		wantDue     time.Time
		wantSkipped int
		wantStop    Stop
	}{
		{"on time: retry 2 at its slot", 2, at(84.8), at(254.4), 0, NoStop},
		{"released after 30 h: skip to retry 11", 2, at(30 * 3600), at(173585.6), 9, NoStop},
		{"released 10 s before a slot: skip it (closer than 84.8 s)", 2, at(21614), at(43332.8), 7, NoStop},
		{"released after the last slot: no retry left", 2, at(180000), time.Time{}, 10, MaxAttemptsExceeded},
	}
	for _, c := range cases {
		pr := Progress{Attempts: c.attempts, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: c.last}
		due, skipped, stop := p.NextSlot(pr, 1)
		if !due.Equal(c.wantDue) || skipped != c.wantSkipped || stop != c.wantStop {
			t.Errorf("%s: due %v (+%v), skipped %d, stop %q; want %v, %d, %q", c.name, due, due.Sub(t0),
				skipped, stop, c.wantDue.Sub(t0), c.wantSkipped, c.wantStop)
		}
	}
}

// TestNoCatchUpGapsUnchanged: schedules of gaps count from the last failure
// and never burst: NextSlot is Next, and skips nothing (docs/policies.md#common-rules).
func TestNoCatchUpGapsUnchanged(t *testing.T) {
	t.Parallel()
	p := EventGrid()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	pr := Progress{Attempts: 3, FirstAttemptAt: t0, FirstFailureAt: t0, LastFailureAt: t0.Add(20 * time.Hour)}
	due, skipped, stop := p.NextSlot(pr, 7)
	want, wantStop := p.Next(pr, 7)
	if !due.Equal(want) || skipped != 0 || stop != wantStop || due.Before(pr.LastFailureAt.Add(time.Minute*9/10)) {
		t.Fatalf("NextSlot %v %d %q, Next %v %q", due, skipped, stop, want, wantStop)
	}
}
