package policies

import (
	"fmt"
	"time"
)

// Overrides is a subscription's retry_policy: every field optional; a nil field
// keeps the policy's own value (docs/policies.md#overriding-a-policy: every
// number can be overridden per subscription). A non-nil empty code list clears
// the policy's list (success_codes [] means any 2xx; dead_letter_codes [] means
// none).
type Overrides struct {
	MaxAttempts     *int             `json:"max_attempts,omitempty"`
	TTLSeconds      *int             `json:"ttl_seconds,omitempty"`
	TimeoutSeconds  *int             `json:"timeout_seconds,omitempty"`
	DeadLettering   *bool            `json:"dead_lettering,omitempty"`
	JitterFraction  *float64         `json:"jitter_fraction,omitempty"`
	SuccessCodes    []int            `json:"success_codes,omitempty"`
	DeadLetterCodes []int            `json:"dead_letter_codes,omitempty"`
	OnExhausted     *Exhausted       `json:"on_exhausted,omitempty"`
	Custom          *Custom          `json:"custom,omitempty"` // schedule for the "custom" policy
	Health          *HealthOverrides `json:"health,omitempty"` // circuit breaker thresholds
	// HonorRetryAfter false ignores the receiver's Retry-After: every retry
	// comes when the schedule says (docs/policies.md#retry-after-and-the-schedules).
	HonorRetryAfter *bool `json:"honor_retry_after,omitempty"`
}

// FieldError names the offending field (a JSON path such as
// "retry_policy.max_attempts") and says what is wrong with it.
type FieldError struct {
	Field   string
	Message string
	err     error // the cause, if any (ErrUnknown for an unknown policy)
}

// Error formats the error as "field: message".
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap returns the cause, so errors.Is(err, ErrUnknown) works.
func (e *FieldError) Unwrap() error { return e.err }

// fieldErr builds a *FieldError with a formatted message.
func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Override ranges. docs/policies.md#eventgrid: maxDeliveryAttempts 1-30 and
// eventTimeToLiveInMinutes 1-1440 (given here in seconds, 60-86,400); the same
// limits hold for docs/policies.md#eventgrid-edge, whose retryPolicy is the
// same object.
const (
	maxAttemptsLimit  = 100
	maxTimeoutSeconds = 300
	maxJitterFraction = 0.5
	eventGridAttempts = 30
	eventGridTTLMin   = 60
	eventGridTTLMax   = 1440 * 60
	generalSection    = "docs/policies.md#custom-policies"
	eventGridSection  = "docs/policies.md#eventgrid"
	retryPolicyPrefix = "retry_policy."
	maxWaitSeconds    = int(maxWait / time.Second)
)

// limits are the ranges a policy's overrides must fall in.
type limits struct {
	maxAttempts    int
	ttlMin, ttlMax int
	cite           string
}

// limitsFor returns the override ranges of the named policy.
func limitsFor(name string) limits {
	if name == NameEventGrid || name == NameEventGridEdge {
		return limits{eventGridAttempts, eventGridTTLMin, eventGridTTLMax, eventGridSection}
	}
	return limits{maxAttemptsLimit, 1, maxWaitSeconds, generalSection}
}

// Resolve returns the named policy (a builtin, or "custom" built from
// o.Custom) with o applied and validated. An unknown name gives a *FieldError
// on "policy" that wraps ErrUnknown; a bad value gives a *FieldError on its
// JSON path. Setting on_exhausted to dead_letter turns dead_lettering on
// unless it is given too (docs/policies.md#eventgrid: dead-lettering is a switch).
func Resolve(name string, o Overrides) (Policy, error) {
	p, err := basePolicy(name, o.Custom)
	if err != nil {
		return Policy{}, err
	}
	lim := limitsFor(name)
	for _, apply := range []func(*Policy, limits) error{o.applyAttempts, o.applyTimes, o.applyCodes, o.applyOutcome, o.applyHealth} {
		if err := apply(&p, lim); err != nil {
			return Policy{}, err
		}
	}
	return p, nil
}

// Validate reports whether o is valid for the named policy.
func (o Overrides) Validate(policyName string) error {
	_, err := Resolve(policyName, o)
	return err
}

// basePolicy is the named policy before overrides.
func basePolicy(name string, c *Custom) (Policy, error) {
	if name == NameCustom {
		if c == nil {
			return Policy{}, fieldErr(retryPolicyPrefix+"custom", "is required for policy %q (%s)", NameCustom, generalSection)
		}
		return c.Policy()
	}
	if c != nil {
		return Policy{}, fieldErr(retryPolicyPrefix+"custom", "is only used by policy %q", NameCustom)
	}
	p, err := Lookup(name)
	if err != nil {
		msg := fmt.Sprintf("unknown policy %q (known: %v and %q)", name, Names(), NameCustom)
		return Policy{}, &FieldError{Field: "policy", Message: msg, err: err}
	}
	return p, nil
}

// extenders lengthen the formula schedules when max_attempts asks for more
// retries than the default (docs/policies.md#sap: "5 retries, configurable").
var extenders = map[string]func(n int) []time.Duration{
	NameWorkfront: workfrontOffsets,
	NameSAP:       sapOffsets,
}

// applyAttempts applies max_attempts, lengthening a formula schedule when
// needed, and rejects more attempts than the schedule can hold.
func (o Overrides) applyAttempts(p *Policy, lim limits) error {
	if o.MaxAttempts == nil {
		return nil
	}
	const field = retryPolicyPrefix + "max_attempts"
	n := *o.MaxAttempts
	if n < 1 || n > lim.maxAttempts {
		return fieldErr(field, "must be between 1 and %d (%s)", lim.maxAttempts, lim.cite)
	}
	if ext, ok := extenders[p.Name]; ok && n-1 > len(p.Schedule.Durations) {
		p.Schedule.Durations = ext(n - 1)
	}
	if r, bounded := p.Schedule.retries(); bounded && n-1 > r {
		return fieldErr(field, "must be at most %d: the %s schedule has %d retries", r+1, p.Name, r)
	}
	p.MaxAttempts = n
	return nil
}

// applyTimes applies ttl_seconds, timeout_seconds and jitter_fraction.
func (o Overrides) applyTimes(p *Policy, lim limits) error {
	if v := o.TTLSeconds; v != nil {
		if *v < lim.ttlMin || *v > lim.ttlMax {
			return fieldErr(retryPolicyPrefix+"ttl_seconds", "must be between %d and %d seconds (%s)", lim.ttlMin, lim.ttlMax, lim.cite)
		}
		p.TTL = time.Duration(*v) * time.Second
	}
	if v := o.TimeoutSeconds; v != nil {
		if *v < 1 || *v > maxTimeoutSeconds {
			return fieldErr(retryPolicyPrefix+"timeout_seconds", "must be between 1 and %d seconds", maxTimeoutSeconds)
		}
		p.Timeout = time.Duration(*v) * time.Second
	}
	if v := o.JitterFraction; v != nil {
		if !(*v >= 0 && *v <= maxJitterFraction) { // also rejects NaN
			return fieldErr(retryPolicyPrefix+"jitter_fraction", "must be between 0 and %g", maxJitterFraction)
		}
		p.JitterFraction = *v
	}
	if v := o.HonorRetryAfter; v != nil && !*v {
		p.RetryAfterMax = 0
	}
	return nil
}

// applyCodes applies success_codes and dead_letter_codes; no code may be both.
func (o Overrides) applyCodes(p *Policy, _ limits) error {
	var err error
	if o.SuccessCodes != nil {
		if p.SuccessCodes, err = checkCodes(retryPolicyPrefix+"success_codes", o.SuccessCodes); err != nil {
			return err
		}
	}
	if o.DeadLetterCodes != nil {
		if p.DeadLetterCodes, err = checkCodes(retryPolicyPrefix+"dead_letter_codes", o.DeadLetterCodes); err != nil {
			return err
		}
	}
	for i, c := range p.DeadLetterCodes {
		if p.IsSuccess(c) {
			return fieldErr(fmt.Sprintf("%sdead_letter_codes[%d]", retryPolicyPrefix, i), "%d is also a success code", c)
		}
	}
	return nil
}

// checkCodes copies codes, rejecting any outside 100..599.
func checkCodes(field string, codes []int) ([]int, error) {
	out := make([]int, len(codes))
	for i, c := range codes {
		if c < 100 || c > 599 {
			return nil, fieldErr(fmt.Sprintf("%s[%d]", field, i), "status code %d is not between 100 and 599", c)
		}
		out[i] = c
	}
	return out, nil
}

// applyOutcome applies on_exhausted and dead_lettering.
func (o Overrides) applyOutcome(p *Policy, _ limits) error {
	if v := o.OnExhausted; v != nil {
		switch *v {
		case DeadLetter, Drop, DeactivateAndQueue:
		default:
			return fieldErr(retryPolicyPrefix+"on_exhausted", "must be one of %s, %s, %s; got %q", DeadLetter, Drop, DeactivateAndQueue, *v)
		}
		p.OnExhausted = *v
		if *v == DeadLetter && o.DeadLettering == nil {
			p.DeadLettering = true
		}
	}
	if v := o.DeadLettering; v != nil {
		if !*v && o.OnExhausted != nil && *o.OnExhausted == DeadLetter {
			return fieldErr(retryPolicyPrefix+"dead_lettering", "cannot be false when on_exhausted is %s", DeadLetter)
		}
		p.DeadLettering = *v
	}
	return nil
}
