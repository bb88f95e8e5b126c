package policies

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Custom describes a user-defined schedule (docs/policies.md#custom-policies):
// a fixed interval, exponential (base, factor, cap), or an explicit list of
// gaps or offsets. Durations are in seconds and may be fractional.
type Custom struct {
	Kind            ScheduleKind `json:"kind"`                       // fixed | exponential | gaps | offsets
	IntervalSeconds float64      `json:"interval_seconds,omitempty"` // fixed
	BaseSeconds     float64      `json:"base_seconds,omitempty"`     // exponential
	Factor          float64      `json:"factor,omitempty"`           // exponential, >= 1
	CapSeconds      float64      `json:"cap_seconds,omitempty"`      // exponential, optional
	Seconds         []float64    `json:"seconds,omitempty"`          // gaps or offsets, each > 0, offsets ascending
	RepeatLast      bool         `json:"repeat_last,omitempty"`      // gaps
}

const (
	customPrefix = retryPolicyPrefix + "custom."
	// minWaitSeconds is the shortest wait a custom schedule may hold.
	minWaitSeconds = 0.001
	// maxListLen keeps a list's default MaxAttempts within max_attempts' 1..100.
	maxListLen = maxAttemptsLimit - 1
	// customDefaultAttempts is MaxAttempts for schedules that never end.
	customDefaultAttempts = 10
)

// Policy returns the validated custom policy (docs/policies.md#custom-policies),
// or a *FieldError on "retry_policy.custom.<field>". Its defaults: MaxAttempts
// len(seconds)+1 for a list without RepeatLast, else 10; Timeout 30 s; no
// jitter; dead-lettered when retries run out; no circuit breaker but 410
// Gone (CustomHealth) unless its health overrides set one.
func (c Custom) Policy() (Policy, error) {
	s, err := c.schedule()
	if err != nil {
		return Policy{}, err
	}
	p := Policy{
		Name: NameCustom, Section: generalSection,
		Description:   describeCustom(s),
		Schedule:      s,
		MaxAttempts:   customDefaultAttempts,
		Timeout:       30 * time.Second,
		DeadLettering: true, OnExhausted: DeadLetter,
		Health: CustomHealth, RetryAfterMax: time.Hour,
	}
	if n, bounded := s.retries(); bounded {
		p.MaxAttempts = n + 1
	}
	return p, nil
}

// schedule validates c and builds its Schedule.
func (c Custom) schedule() (Schedule, error) {
	if err := c.checkUnused(); err != nil {
		return Schedule{}, err
	}
	switch c.Kind {
	case Fixed:
		d, err := seconds("interval_seconds", c.IntervalSeconds)
		return Schedule{Kind: Fixed, Interval: d}, err
	case Exponential:
		return c.exponential()
	case Gaps, Offsets:
		return c.list()
	case "":
		return Schedule{}, fieldErr(customPrefix+"kind", "is required: one of %s, %s, %s, %s", Fixed, Exponential, Gaps, Offsets)
	default:
		return Schedule{}, fieldErr(customPrefix+"kind", "must be one of %s, %s, %s, %s; got %q", Fixed, Exponential, Gaps, Offsets, c.Kind)
	}
}

// checkUnused rejects fields that c.Kind does not read, which are most
// likely a mistake in the request.
func (c Custom) checkUnused() error {
	uses := []struct {
		field string
		set   bool
		kinds []ScheduleKind
	}{
		{"interval_seconds", c.IntervalSeconds != 0, []ScheduleKind{Fixed}},
		{"base_seconds", c.BaseSeconds != 0, []ScheduleKind{Exponential}},
		{"factor", c.Factor != 0, []ScheduleKind{Exponential}},
		{"cap_seconds", c.CapSeconds != 0, []ScheduleKind{Exponential}},
		{"seconds", c.Seconds != nil, []ScheduleKind{Gaps, Offsets}},
		{"repeat_last", c.RepeatLast, []ScheduleKind{Gaps}},
	}
	for _, u := range uses {
		if u.set && !kindIn(c.Kind, u.kinds) {
			return fieldErr(customPrefix+u.field, "is not used by kind %q", c.Kind)
		}
	}
	return nil
}

// kindIn reports whether k is one of kinds.
func kindIn(k ScheduleKind, kinds []ScheduleKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// exponential validates and builds an Exponential schedule.
func (c Custom) exponential() (Schedule, error) {
	base, err := seconds("base_seconds", c.BaseSeconds)
	if err != nil {
		return Schedule{}, err
	}
	if !(c.Factor >= 1) || math.IsInf(c.Factor, 1) {
		return Schedule{}, fieldErr(customPrefix+"factor", "must be a finite number of at least 1")
	}
	s := Schedule{Kind: Exponential, Base: base, Factor: c.Factor}
	if c.CapSeconds == 0 {
		return s, nil
	}
	if s.Cap, err = seconds("cap_seconds", c.CapSeconds); err != nil {
		return Schedule{}, err
	}
	if s.Cap < base {
		return Schedule{}, fieldErr(customPrefix+"cap_seconds", "must be at least base_seconds (%g)", c.BaseSeconds)
	}
	return s, nil
}

// list validates and builds a Gaps or Offsets schedule.
func (c Custom) list() (Schedule, error) {
	if len(c.Seconds) == 0 || len(c.Seconds) > maxListLen {
		return Schedule{}, fieldErr(customPrefix+"seconds", "must hold 1 to %d durations", maxListLen)
	}
	s := Schedule{Kind: c.Kind, RepeatLast: c.RepeatLast, Durations: make([]time.Duration, len(c.Seconds))}
	for i, v := range c.Seconds {
		field := fmt.Sprintf("seconds[%d]", i)
		d, err := seconds(field, v)
		if err != nil {
			return Schedule{}, err
		}
		if c.Kind == Offsets && i > 0 && d <= s.Durations[i-1] {
			return Schedule{}, fieldErr(customPrefix+field, "offsets must ascend: %g is not after %g", v, c.Seconds[i-1])
		}
		s.Durations[i] = d
	}
	return s, nil
}

// seconds converts a custom field's seconds to a Duration, rejecting values
// outside minWaitSeconds..maxWaitSeconds (and NaN).
func seconds(field string, v float64) (time.Duration, error) {
	if !(v >= minWaitSeconds && v <= float64(maxWaitSeconds)) {
		return 0, fieldErr(customPrefix+field, "must be between %g and %d seconds; got %g", minWaitSeconds, maxWaitSeconds, v)
	}
	return time.Duration(math.Round(v * float64(time.Second))), nil
}

// describeCustom summarizes a custom schedule in words.
func describeCustom(s Schedule) string {
	switch s.Kind {
	case Fixed:
		return fmt.Sprintf("Custom: a retry every %v", s.Interval)
	case Exponential:
		d := fmt.Sprintf("Custom: exponential, %v × %g per retry", s.Base, s.Factor)
		if s.Cap > 0 {
			d += fmt.Sprintf(", capped at %v", s.Cap)
		}
		return d
	}
	parts := make([]string, len(s.Durations))
	for i, d := range s.Durations {
		parts[i] = d.String()
	}
	if s.Kind == Offsets {
		return "Custom: retries at " + strings.Join(parts, ", ") + " after the first failure"
	}
	d := "Custom: gaps of " + strings.Join(parts, ", ")
	if s.RepeatLast {
		d += ", then every " + parts[len(parts)-1]
	}
	return d
}
