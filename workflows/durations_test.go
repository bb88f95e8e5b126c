package workflows_test

import "time"

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

// startOffsets is each time minus the first.
func startOffsets(ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, x := range ts {
		out[i] = x.Sub(ts[0])
	}
	return out
}
