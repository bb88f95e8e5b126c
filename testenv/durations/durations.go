// Package durations builds the lists of durations that schedule tests
// compare against, from seconds as the policy documents write them. It
// depends on the standard library only, so the pure policies package can
// use it in its tests.
package durations

import (
	"math"
	"slices"
	"time"
)

// Secs converts seconds to a Duration, exactly for decimals like 84.8.
func Secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// List converts a list of seconds.
func List(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = Secs(s)
	}
	return out
}

// Repeat is n copies of d.
func Repeat(d time.Duration, n int) []time.Duration {
	return slices.Repeat([]time.Duration{d}, n)
}
