package workflows

import (
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// Error kinds of a failed attempt.
const (
	KindTimeout           = "timeout"
	KindConnectionRefused = "connection_refused"
	KindDNS               = "dns"
	KindTLS               = "tls"
	KindHTTPStatus        = "http_status"
	KindNetwork           = "network"
	// KindBlocked is an attempt the egress guard refused before connecting:
	// the URL resolves into a denied network. It ends the delivery as the
	// policy ends a final failure, never retried (judge).
	KindBlocked = "blocked"
)

// DeliverInput is the input of Deliver: one attempt of one delivery.
type DeliverInput struct {
	DeliveryID  string
	Attempt     int // 0 is the first delivery
	ScheduledAt time.Time
	Timeout     time.Duration
	// Probe makes the attempt even when the endpoint is not enabled.
	Probe bool
	// Success lists the status codes that count as success; empty means 2xx.
	Success []int
	// Health is the policy's circuit breaker, for the endpoint workflow.
	Health policies.Health
	// MayThrottle says the workflow understands Throttled: the activity
	// then holds the attempt back when the endpoint's limits leave no room.
	MayThrottle bool
	// FinishDelivered asks the activity to record the delivery as delivered
	// itself when the attempt succeeds (Finished), so that a first-attempt
	// success takes one bookkeeping step, not two.
	FinishDelivered bool
	// MayHandOver says the workflow understands HandedOver (from
	// versionFairShares, on a local first attempt): the activity then
	// hands the attempt over when EndpointID's share of local first
	// attempts is used up (activities.Shares).
	MayHandOver bool
	EndpointID  string
	// LateAnswer, when longer than Timeout, is how long the request is
	// kept open after the attempt was recorded as a timeout at Timeout: a
	// success within it records the delivery delivered and signals the
	// workflow (SignalLateAnswer; docs/policies.md#eventgrid).
	LateAnswer time.Duration
	// RecordNow asks the activity to record the outcome before it returns,
	// never after (activities.Later): a Sequencer's own first attempt
	// (sequencer_attempt.go), whose sequence moves on by what PostgreSQL
	// says.
	RecordNow bool `json:",omitempty"`
}

// SignalLateAnswer tells a Delivery that a request it had recorded as a
// timeout was answered with a success within its policy's LateAnswer, and
// was recorded delivered: it makes no more attempts. Its payload is a
// LateAnswerResult.
const SignalLateAnswer = "late_answer"

// LateAnswerResult is the late success SignalLateAnswer reports.
type LateAnswerResult struct {
	Attempt    int
	StatusCode int
	DurationMs float64
}

// DeliverResult is what one attempt came to.
type DeliverResult struct {
	// Skipped is true when no request was made because the endpoint is
	// disabled or frozen; EndpointState says which.
	Skipped       bool             `json:",omitzero"`
	EndpointState string           `json:",omitzero"`
	StatusCode    int              `json:",omitzero"`
	ErrorKind     string           `json:",omitzero"`
	Error         string           `json:",omitzero"`
	DurationMs    float64          `json:",omitzero"`
	Success       bool             `json:",omitzero"`
	Counters      EndpointCounters `json:",omitzero"`
	// Throttled is true when no request was made because the endpoint's
	// concurrency cap or rate limit left no room (only when MayThrottle):
	// not an attempt. RetryIn is when room is expected, zero when unknown.
	Throttled bool          `json:",omitzero"`
	RetryIn   time.Duration `json:",omitzero"`
	// RetryAfter is when the receiver asked to be tried again, with
	// Retry-After on a 429 or 503 answer (zero: it did not).
	RetryAfter time.Time `json:",omitzero"`
	// Finished is true when the activity recorded the delivery as
	// delivered (FinishDelivered): the workflow then runs no Finish.
	Finished bool `json:",omitzero"`
	// HandedOver is true when no request was made because the endpoint's
	// share of local first attempts was used up (only when MayHandOver):
	// not an attempt; the workflow makes it as a regular activity.
	HandedOver bool `json:",omitzero"`
	// Ended is the delivery's final status when it had ended before the
	// attempt (a reset or replayed workflow, an operator's action): no
	// request was made, and the workflow ends with it.
	Ended policies.Status `json:",omitzero"`
}

// StatusInput is the input of SetStatus.
type StatusInput struct {
	DeliveryID    string
	Status        policies.Status // retrying or waiting
	NextAttemptAt *time.Time
}

// StatusResult is the result of SetStatus.
type StatusResult struct {
	// EndpointState is the endpoint's state when the delivery was recorded
	// as waiting ("" for other statuses).
	EndpointState string
}

// FinishInput is the input of Finish.
type FinishInput struct {
	DeliveryID string
	Status     policies.Status // delivered, dead_lettered, dropped or queued
	Reason     string
	LastStatus int
	LastError  string
	// OnExhausted is the delivery's policy's: a delivery queued under
	// policies.Queue (SAP's queue mode) leaves its subscription active
	// (policies.DeactivatesSubscription). Empty from deliveries started
	// before it was carried.
	OnExhausted policies.Exhausted `json:",omitempty"`
}

// FinishResult is the result of Finish.
type FinishResult struct {
	DeadLetterID string
}

// EndpointCounters are the endpoint's health counters after an attempt was
// counted, as the Deliver activity reports them.
type EndpointCounters struct {
	EndpointID          string     `json:"endpoint_id"`
	State               string     `json:"state"`
	Attempts            int64      `json:"attempts,omitzero"`
	Failures            int64      `json:"failures,omitzero"`
	ConsecutiveFailures int64      `json:"consecutive_failures,omitzero"`
	LastSuccessAt       *time.Time `json:"last_success_at,omitempty"`
}
