package workflows

import (
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// ClaimInput is the input of ClaimBatch.
type ClaimInput struct {
	SubscriptionID string
	// BatchID is the id the claimed batch gets, chosen deterministically by
	// the Batcher: a retried claim returns the batch of that id if the first
	// try made it. Empty picks a random id.
	BatchID string
	// FullOnly claims nothing unless a full batch is waiting.
	FullOnly bool
}

// ClaimResult is one claimed batch; BatchID is "" when nothing was claimed.
type ClaimResult struct {
	BatchID     string
	DeliveryIDs []string
	// Remaining counts the pending deliveries left unclaimed.
	Remaining int
	// Gone: the subscription was deleted and nothing is pending.
	Gone bool
	// PublishedAt is when the batch's oldest delivery was stored.
	PublishedAt time.Time
	// PublishedAts are when each delivery was stored, in DeliveryIDs' order.
	PublishedAts []time.Time
}

// DeliverBatchInput is the input of DeliverBatch: one attempt of one batch.
type DeliverBatchInput struct {
	BatchID     string
	DeliveryIDs []string
	Attempt     int // 0 is the first delivery
	ScheduledAt time.Time
	Timeout     time.Duration
	// Probe makes the attempt even when the endpoint is disabled (never
	// when it is frozen), as Deliver's does.
	Probe   bool
	Success []int
	// Health is the policy's circuit breaker, for the endpoint workflow.
	Health policies.Health
	// MayThrottle: see DeliverInput.
	MayThrottle bool
}

// BatchStatusInput is the input of SetBatchStatus.
type BatchStatusInput struct {
	DeliveryIDs   []string
	Status        policies.Status
	NextAttemptAt *time.Time
}

// FinishBatchInput is the input of FinishBatch.
type FinishBatchInput struct {
	DeliveryIDs []string
	Status      policies.Status
	Reason      string
	LastStatus  int
	LastError   string
	// OnExhausted is the batch's policy's, as in FinishInput.
	OnExhausted policies.Exhausted `json:",omitempty"`
}

// FinishBatchResult is the result of FinishBatch.
type FinishBatchResult struct {
	DeadLetterIDs []string
}
