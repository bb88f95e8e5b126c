package workflows_test

import (
	"math"
	"slices"
	"time"
)

// secs converts seconds to a Duration, exactly for decimals like 84.8.
func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// secList converts a list of seconds.
func secList(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = secs(s)
	}
	return out
}

// repeat is n copies of d.
func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// cumulative turns gaps into offsets from the first attempt, starting at 0.
func cumulative(gaps []time.Duration) []time.Duration {
	out := []time.Duration{0}
	var sum time.Duration
	for _, g := range gaps {
		sum += g
		out = append(out, sum)
	}
	return out
}

// equalDurations compares two duration lists exactly.
func equalDurations(a, b []time.Duration) bool { return slices.Equal(a, b) }

// startOffsets is each time minus the first.
func startOffsets(ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, x := range ts {
		out[i] = x.Sub(ts[0])
	}
	return out
}
