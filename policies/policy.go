// Package policies holds hookrelay's delivery policies: the retry schedules,
// limits, success and dead-letter codes of each vendor, as docs/policies.md
// states them (with the vendor documents they come from and the decisions taken
// where those are unclear), and the custom policies users define. Everything
// here is pure data plus small deterministic functions: no clock, no global
// randomness, no Temporal import.
package policies

import (
	"fmt"
	"time"
)

// ScheduleKind says how a Schedule's durations are measured.
type ScheduleKind string

const (
	// Gaps: each retry waits its duration after the previous failed attempt.
	Gaps ScheduleKind = "gaps"
	// Offsets: retry k is made its duration after the first failed attempt.
	Offsets ScheduleKind = "offsets"
	// Fixed: every retry waits Interval after the previous failed attempt.
	Fixed ScheduleKind = "fixed"
	// Exponential: retry k waits Base*Factor^(k-1), capped at Cap, after the
	// previous failed attempt.
	Exponential ScheduleKind = "exponential"
)

// Schedule is the list of waits between deliveries.
type Schedule struct {
	Kind ScheduleKind `json:"kind"`
	// Durations are the gaps (Gaps) or offsets (Offsets) of retry 1, 2, ...
	// When RepeatLast is true the last gap repeats for ever (Gaps only).
	Durations  []time.Duration `json:"durations,omitempty"`
	RepeatLast bool            `json:"repeat_last,omitempty"`
	Interval   time.Duration   `json:"interval,omitempty"`
	Base       time.Duration   `json:"base,omitempty"`
	Factor     float64         `json:"factor,omitempty"`
	Cap        time.Duration   `json:"cap,omitempty"`
}

// Exhausted says what happens when retries run out.
type Exhausted string

const (
	// DeadLetter stores the delivery in the dead-letter store.
	DeadLetter Exhausted = "dead_letter"
	// Drop ends the delivery as dropped, keeping a record of it.
	Drop Exhausted = "drop"
	// DeactivateAndQueue deactivates the subscription and queues the event for
	// retrieval (docs/policies.md#sap).
	DeactivateAndQueue Exhausted = "deactivate_and_queue"
	// Queue queues the event for retrieval and leaves the subscription
	// active: an account in SAP's queue mode after its one push failed
	// (docs/policies.md#sap, QueueMode). Not a retry_policy value.
	Queue Exhausted = "queue"
)

// Health holds the per-endpoint circuit breaker thresholds
// (docs/policies.md#workfront). A zero value disables that rule; its JSON
// (in workflow inputs, and in the endpoint workflow's state query) leaves
// such a rule out.
type Health struct {
	Window             time.Duration `json:"window,omitzero"`
	DisableMinAttempts int           `json:"disable_min_attempts,omitzero"`
	DisableFailureRate float64       `json:"disable_failure_rate,omitzero"`
	DisableConsecutive int           `json:"disable_consecutive,omitzero"`
	FreezeConsecutive  int           `json:"freeze_consecutive,omitzero"`
	FreezeNoSuccessFor time.Duration `json:"freeze_no_success_for,omitzero"`
	FreezeAlwaysAfter  int           `json:"freeze_always_after,omitzero"`
	ProbeInterval      time.Duration `json:"probe_interval,omitzero"`
	DisableOnGone      bool          `json:"disable_on_gone,omitzero"`
}

// Policy is one complete delivery policy. MaxAttempts counts every delivery,
// the first included; TTL is measured from the first attempt; zero TTL means
// no limit besides MaxAttempts. Its JSON is what a delivery's workflow input
// carries into every history (the API shows a PolicyDoc): zero fields are
// left out, and read back as zero.
type Policy struct {
	Name            string        `json:"name"`
	Description     string        `json:"description,omitzero"`
	Section         string        `json:"section,omitzero"`
	Schedule        Schedule      `json:"schedule"`
	MaxAttempts     int           `json:"max_attempts,omitzero"`
	TTL             time.Duration `json:"ttl,omitzero"`
	Timeout         time.Duration `json:"timeout,omitzero"`
	JitterFraction  float64       `json:"jitter_fraction,omitzero"`
	SuccessCodes    []int         `json:"success_codes,omitempty"`
	DeadLetterCodes []int         `json:"dead_letter_codes,omitempty"`
	DeadLettering   bool          `json:"dead_lettering,omitzero"`
	OnExhausted     Exhausted     `json:"on_exhausted,omitzero"`
	Health          Health        `json:"health,omitzero"`
	// RetryAfterMax bounds how far a receiver's Retry-After may push a retry
	// back (RetryAfterDue); zero ignores Retry-After.
	RetryAfterMax time.Duration `json:"retry_after_max,omitzero"`
	// LateAnswer, when longer than Timeout, is how long a request recorded
	// as a timeout stays open: a success by then still delivers the event
	// (docs/policies.md#eventgrid); zero: none.
	LateAnswer time.Duration `json:"late_answer,omitzero"`
}

// Verdict is what a policy makes of one attempt's outcome.
type Verdict string

const (
	// Delivered: the attempt succeeded.
	Delivered Verdict = "delivered"
	// Retry: the attempt failed and may be retried.
	Retry Verdict = "retry"
	// Undeliverable: the response says the event can never succeed; it skips
	// the remaining retries.
	Undeliverable Verdict = "undeliverable"
)

// Classify maps an HTTP status code (0 when there was no response) to a Verdict.
func (p Policy) Classify(status int) Verdict {
	if status == 0 {
		return Retry
	}
	if p.IsSuccess(status) {
		return Delivered
	}
	for _, c := range p.DeadLetterCodes {
		if c == status {
			return Undeliverable
		}
	}
	return Retry
}

// IsSuccess reports whether status counts as a success under the policy.
func (p Policy) IsSuccess(status int) bool { return IsSuccessCode(p.SuccessCodes, status) }

// IsSuccessCode is hookrelay's one success rule: a response's status counts
// as a success when it is one of codes, or any 2xx when codes is empty. The
// Deliver activity records attempts by it and Classify judges them by it.
func IsSuccessCode(codes []int, status int) bool {
	if len(codes) == 0 {
		return status >= 200 && status <= 299
	}
	for _, c := range codes {
		if c == status {
			return true
		}
	}
	return false
}

// FinalStatus is the status a delivery ends with when it cannot be delivered:
// dead_lettered, dropped or queued.
func (p Policy) FinalStatus() Status {
	switch {
	case p.OnExhausted == DeactivateAndQueue || p.OnExhausted == Queue:
		return StatusQueued
	case p.OnExhausted == DeadLetter && p.DeadLettering:
		return StatusDeadLettered
	default:
		return StatusDropped
	}
}

// UndeliverableStatus is how a delivery ends when its endpoint answered a
// code that sends it straight to the end (DeadLetterCodes): deactivated and
// queued under a policy that ends that way (docs/policies.md#sap), else
// dead-lettered where dead-lettering is on, else dropped.
func (p Policy) UndeliverableStatus() Status {
	switch {
	case p.OnExhausted == DeactivateAndQueue || p.OnExhausted == Queue:
		return StatusQueued
	case p.DeadLettering:
		return StatusDeadLettered
	default:
		return StatusDropped
	}
}

// DeactivatesSubscription reports whether a delivery that ends with status
// under a policy whose OnExhausted is how deactivates its subscription: when
// a delivery is queued because its retries ran out, its subscription gets no
// more pushes, and every later event for it is queued, until it is
// reactivated (docs/policies.md#sap). A delivery queued in queue mode (Queue)
// leaves it active; how is empty for deliveries that did not say it.
func DeactivatesSubscription(status Status, how Exhausted) bool {
	return status == StatusQueued && how != Queue
}

// QueueMode is p as an account in SAP's queue mode runs it
// (docs/policies.md#sap): one push and no retry; a failed push, or an answer
// in DeadLetterCodes, queues the event at once and leaves the subscription
// active. A push its endpoint's breaker holds back is queued at once too (no
// time-to-live to wait out), and Retry-After has no retry to move.
func (p Policy) QueueMode() Policy {
	p.MaxAttempts = 1
	p.TTL = 0
	p.OnExhausted = Queue
	p.DeadLettering = false
	p.RetryAfterMax = 0
	return p
}

// String names the policy.
func (p Policy) String() string { return fmt.Sprintf("policy %q", p.Name) }
