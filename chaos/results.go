package chaos

import "github.com/hookrelay/hookrelay/policies"

// Figures is the tally as a data file's figures (bench/results): counts,
// and settle in seconds.
func (t Tally) Figures() map[string]float64 {
	return map[string]float64{
		"published": float64(t.Published), "delivered": float64(t.Statuses[policies.StatusDelivered]),
		"dead_lettered": float64(t.Statuses[policies.StatusDeadLettered]), "lost": float64(t.Lost),
		"stuck": float64(t.Stuck), "duplicates": float64(t.Duplicates), "rows": float64(t.Rows),
		"unknown": float64(t.Unknown), "cut": float64(t.Cut), "requests": float64(t.Requests),
		"unmatched": float64(len(t.Unmatched)), "settle_s": t.Settle.Seconds(),
	}
}
