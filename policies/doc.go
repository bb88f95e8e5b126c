package policies

import (
	"math"
	"time"
)

// PolicyDoc is a Policy in the HTTP API's JSON form: snake_case fields,
// durations in seconds. SuccessCodes empty means any 2xx (docs/policies.md#terms).
type PolicyDoc struct {
	Name            string       `json:"name"`
	Description     string       `json:"description"`
	Section         string       `json:"section"`
	ScheduleKind    ScheduleKind `json:"schedule_kind"`
	MaxAttempts     int          `json:"max_attempts"`
	TTLSeconds      float64      `json:"ttl_seconds"`
	TimeoutSeconds  float64      `json:"timeout_seconds"`
	JitterFraction  float64      `json:"jitter_fraction"`
	SuccessCodes    []int        `json:"success_codes"`
	DeadLetterCodes []int        `json:"dead_letter_codes"`
	DeadLettering   bool         `json:"dead_lettering"`
	OnExhausted     Exhausted    `json:"on_exhausted"`
	FinalStatus     Status       `json:"final_status"`
	Health          HealthDoc    `json:"health"`
	Rows            []RowDoc     `json:"rows"`
	// RetryAfterMaxSeconds bounds how far a receiver's Retry-After may push
	// a retry back; 0: Retry-After is ignored.
	RetryAfterMaxSeconds float64 `json:"retry_after_max_seconds"`
}

// HealthDoc is Health (docs/policies.md#workfront-circuit-breaker) in JSON form,
// durations in seconds.
type HealthDoc struct {
	WindowSeconds             float64 `json:"window_seconds"`
	DisableMinAttempts        int     `json:"disable_min_attempts"`
	DisableFailureRate        float64 `json:"disable_failure_rate"`
	DisableConsecutive        int     `json:"disable_consecutive"`
	FreezeConsecutive         int     `json:"freeze_consecutive"`
	FreezeNoSuccessForSeconds float64 `json:"freeze_no_success_for_seconds"`
	FreezeAlwaysAfter         int     `json:"freeze_always_after"`
	ProbeIntervalSeconds      float64 `json:"probe_interval_seconds"`
	DisableOnGone             bool    `json:"disable_on_gone"`
}

// RowDoc is a Row in JSON form, durations in seconds.
type RowDoc struct {
	Attempt       int     `json:"attempt"`
	GapSeconds    float64 `json:"gap_seconds"`
	OffsetSeconds float64 `json:"offset_seconds"`
	GapMinSeconds float64 `json:"gap_min_seconds"`
	GapMaxSeconds float64 `json:"gap_max_seconds"`
}

// Doc returns the policy in the HTTP API's JSON form, with its Rows.
func (p Policy) Doc() PolicyDoc {
	return PolicyDoc{
		Name:            p.Name,
		Description:     p.Description,
		Section:         p.Section,
		ScheduleKind:    p.Schedule.Kind,
		MaxAttempts:     p.MaxAttempts,
		TTLSeconds:      p.TTL.Seconds(),
		TimeoutSeconds:  p.Timeout.Seconds(),
		JitterFraction:  p.JitterFraction,
		SuccessCodes:    append([]int{}, p.SuccessCodes...),
		DeadLetterCodes: append([]int{}, p.DeadLetterCodes...),
		DeadLettering:   p.DeadLettering,
		OnExhausted:     p.OnExhausted,
		FinalStatus:     p.FinalStatus(),
		Health:          p.Health.Doc(),
		Rows:            rowDocs(p.Rows()),

		RetryAfterMaxSeconds: p.RetryAfterMax.Seconds(),
	}
}

// Doc returns the thresholds in JSON form.
func (h Health) Doc() HealthDoc {
	return HealthDoc{
		WindowSeconds:             h.Window.Seconds(),
		DisableMinAttempts:        h.DisableMinAttempts,
		DisableFailureRate:        h.DisableFailureRate,
		DisableConsecutive:        h.DisableConsecutive,
		FreezeConsecutive:         h.FreezeConsecutive,
		FreezeNoSuccessForSeconds: h.FreezeNoSuccessFor.Seconds(),
		FreezeAlwaysAfter:         h.FreezeAlwaysAfter,
		ProbeIntervalSeconds:      h.ProbeInterval.Seconds(),
		DisableOnGone:             h.DisableOnGone,
	}
}

// Health returns the thresholds d writes (Doc's inverse).
func (d HealthDoc) Health() Health {
	return Health{
		Window:             docSeconds(d.WindowSeconds),
		DisableMinAttempts: d.DisableMinAttempts,
		DisableFailureRate: d.DisableFailureRate,
		DisableConsecutive: d.DisableConsecutive,
		FreezeConsecutive:  d.FreezeConsecutive,
		FreezeNoSuccessFor: docSeconds(d.FreezeNoSuccessForSeconds),
		FreezeAlwaysAfter:  d.FreezeAlwaysAfter,
		ProbeInterval:      docSeconds(d.ProbeIntervalSeconds),
		DisableOnGone:      d.DisableOnGone,
	}
}

// docSeconds is seconds as a duration, rounded to the microsecond.
func docSeconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}

// rowDocs converts rows to their JSON form.
func rowDocs(rows []Row) []RowDoc {
	out := make([]RowDoc, len(rows))
	for i, r := range rows {
		out[i] = RowDoc{
			Attempt:       r.Attempt,
			GapSeconds:    seconds64(r.Gap),
			OffsetSeconds: seconds64(r.Offset),
			GapMinSeconds: seconds64(r.GapMin),
			GapMaxSeconds: seconds64(r.GapMax),
		}
	}
	return out
}

// seconds64 is d in seconds, rounded to the millisecond so that JSON shows
// 173585.6 rather than a float's last-digit noise.
func seconds64(d time.Duration) float64 {
	return d.Round(time.Millisecond).Seconds()
}
