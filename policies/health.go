package policies

import (
	"fmt"
	"time"
)

// Endpoint states (docs/policies.md#workfront-circuit-breaker): enabled is closed,
// disabled is half-open (only a probe every ProbeInterval), frozen is open
// until an operator re-enables it.
const (
	StateEnabled  = "enabled"
	StateDisabled = "disabled"
	StateFrozen   = "frozen"
)

// Snapshot is what the circuit breaker decides on: an endpoint's state and
// counters at Now. LastSuccessAt is the endpoint's last success, or when it was
// first seen if it never succeeded; the zero time means "never", older than any
// limit.
type Snapshot struct {
	State          string
	WindowAttempts int64
	WindowFailures int64
	Consecutive    int64
	LastSuccessAt  time.Time
	Now            time.Time
}

// Decide returns the state an endpoint in snapshot s should be in, and the
// reason when that differs from s.State (docs/policies.md#workfront):
//   - frozen when Consecutive >= FreezeAlwaysAfter, or Consecutive >
//     FreezeConsecutive and the last success is more than FreezeNoSuccessFor
//     old (from enabled or disabled);
//   - disabled when Consecutive >= DisableConsecutive, or WindowAttempts >
//     DisableMinAttempts and the window's failure rate is over
//     DisableFailureRate (from enabled).
//
// A zero count, rate or duration turns its rule off
// (docs/policies.md#common-rules). Decide never re-enables: a probe that
// succeeds or an operator does that. Frozen stays frozen.
func (h Health) Decide(s Snapshot) (state, reason string) {
	if s.State == StateFrozen {
		return StateFrozen, ""
	}
	if r := h.freezeReason(s); r != "" {
		return StateFrozen, r
	}
	if s.State != StateEnabled {
		return s.State, ""
	}
	if r := h.disableReason(s); r != "" {
		return StateDisabled, r
	}
	return s.State, ""
}

func (h Health) freezeReason(s Snapshot) string {
	if h.FreezeAlwaysAfter > 0 && s.Consecutive >= int64(h.FreezeAlwaysAfter) {
		return fmt.Sprintf("%d consecutive failures (frozen at %d)", s.Consecutive, h.FreezeAlwaysAfter)
	}
	if h.FreezeConsecutive > 0 && h.FreezeNoSuccessFor > 0 && s.Consecutive > int64(h.FreezeConsecutive) {
		if s.LastSuccessAt.IsZero() {
			return fmt.Sprintf("%d consecutive failures (over %d) and no success ever", s.Consecutive, h.FreezeConsecutive)
		}
		if age := s.Now.Sub(s.LastSuccessAt); age > h.FreezeNoSuccessFor {
			return fmt.Sprintf("%d consecutive failures (over %d) and no success for %s (over %s)",
				s.Consecutive, h.FreezeConsecutive, age.Round(time.Second), h.FreezeNoSuccessFor)
		}
	}
	return ""
}

// RateRuleApplies reports whether the failure-rate rule is on (a rate, a
// minimum of attempts and a window, none zero) and attempts (in the window,
// or any count that bounds it from above) are enough for it.
func (h Health) RateRuleApplies(attempts int64) bool {
	return h.DisableFailureRate > 0 && h.DisableMinAttempts > 0 && h.Window > 0 && attempts > int64(h.DisableMinAttempts)
}

func (h Health) disableReason(s Snapshot) string {
	if h.DisableConsecutive > 0 && s.Consecutive >= int64(h.DisableConsecutive) {
		return fmt.Sprintf("%d consecutive failures (disabled at %d)", s.Consecutive, h.DisableConsecutive)
	}
	if h.RateRuleApplies(s.WindowAttempts) {
		rate := float64(s.WindowFailures) / float64(s.WindowAttempts)
		if rate > h.DisableFailureRate {
			return fmt.Sprintf("failure rate %.1f%% over %.0f%% with %d attempts (over %d) in %s",
				100*rate, 100*h.DisableFailureRate, s.WindowAttempts, h.DisableMinAttempts, h.Window)
		}
	}
	return ""
}

// HealthOverrides is the "health" object of a subscription's retry_policy or
// of an endpoint: every field optional, a nil field keeping the value below
// it. Durations are in seconds.
type HealthOverrides struct {
	WindowSeconds             *int     `json:"window_seconds,omitempty"`
	DisableMinAttempts        *int     `json:"disable_min_attempts,omitempty"`
	DisableFailureRate        *float64 `json:"disable_failure_rate,omitempty"`
	DisableConsecutive        *int     `json:"disable_consecutive,omitempty"`
	FreezeConsecutive         *int     `json:"freeze_consecutive,omitempty"`
	FreezeNoSuccessForSeconds *int     `json:"freeze_no_success_for_seconds,omitempty"`
	FreezeAlwaysAfter         *int     `json:"freeze_always_after,omitempty"`
	ProbeIntervalSeconds      *int     `json:"probe_interval_seconds,omitempty"`
	DisableOnGone             *bool    `json:"disable_on_gone,omitempty"`
}

// Health override ranges: the window is counted in one-minute buckets.
const (
	minWindowSeconds = 60
	maxWindowSeconds = 30 * 24 * 3600
	maxProbeSeconds  = 24 * 3600
	maxHealthCount   = 1 << 30
)

// Apply returns h with o applied, or a *FieldError on prefix+"<field>".
func (o HealthOverrides) Apply(h Health, prefix string) (Health, error) {
	ints := []struct {
		name     string
		v        *int
		lo, hi   int
		set      func(int)
		unitName string
	}{
		{"window_seconds", o.WindowSeconds, 0, maxWindowSeconds, func(v int) { h.Window = healthSeconds(v) }, " seconds"},
		{"disable_min_attempts", o.DisableMinAttempts, 0, maxHealthCount, func(v int) { h.DisableMinAttempts = v }, ""},
		{"disable_consecutive", o.DisableConsecutive, 0, maxHealthCount, func(v int) { h.DisableConsecutive = v }, ""},
		{"freeze_consecutive", o.FreezeConsecutive, 0, maxHealthCount, func(v int) { h.FreezeConsecutive = v }, ""},
		{"freeze_no_success_for_seconds", o.FreezeNoSuccessForSeconds, 0, maxWaitSeconds, func(v int) { h.FreezeNoSuccessFor = healthSeconds(v) }, " seconds"},
		{"freeze_always_after", o.FreezeAlwaysAfter, 0, maxHealthCount, func(v int) { h.FreezeAlwaysAfter = v }, ""},
		{"probe_interval_seconds", o.ProbeIntervalSeconds, 0, maxProbeSeconds, func(v int) { h.ProbeInterval = healthSeconds(v) }, " seconds"},
	}
	if v := o.WindowSeconds; v != nil && *v > 0 && *v < minWindowSeconds {
		return Health{}, fieldErr(prefix+"window_seconds", "must be 0 (the failure-rate rule off) or between %d and %d seconds",
			minWindowSeconds, maxWindowSeconds)
	}
	for _, f := range ints {
		if f.v == nil {
			continue
		}
		if *f.v < f.lo || *f.v > f.hi {
			return Health{}, fieldErr(prefix+f.name, "must be between %d and %d%s", f.lo, f.hi, f.unitName)
		}
		f.set(*f.v)
	}
	if v := o.DisableFailureRate; v != nil {
		if !(*v >= 0 && *v <= 1) { // also rejects NaN
			return Health{}, fieldErr(prefix+"disable_failure_rate", "must be between 0 and 1")
		}
		h.DisableFailureRate = *v
	}
	if v := o.DisableOnGone; v != nil {
		h.DisableOnGone = *v
	}
	return h, nil
}

func healthSeconds(v int) time.Duration { return time.Duration(v) * time.Second }

// applyHealth applies retry_policy.health.
func (o Overrides) applyHealth(p *Policy, _ limits) error {
	if o.Health == nil {
		return nil
	}
	h, err := o.Health.Apply(p.Health, retryPolicyPrefix+"health.")
	if err != nil {
		return err
	}
	p.Health = h
	return nil
}

// MayAttempt reports whether an attempt goes to an endpoint in state: an
// enabled one always; a disabled one only as a probe; a frozen one never,
// until an operator re-enables it (docs/policies.md#workfront).
func MayAttempt(state string, probe bool) bool {
	return state == StateEnabled || (probe && state == StateDisabled)
}

// AttemptStates are the endpoint states in which MayAttempt lets an attempt
// (a probe, if probe) go, for a query that decides it in the database.
func AttemptStates(probe bool) []string {
	var out []string
	for _, s := range []string{StateEnabled, StateDisabled, StateFrozen} {
		if MayAttempt(s, probe) {
			out = append(out, s)
		}
	}
	return out
}
