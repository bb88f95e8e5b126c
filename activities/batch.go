package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
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
}

// ClaimBatch claims the next batch of a batching Event Grid subscription
// (POLICIES.md §eventgrid-edge output batching): up to maxEventsPerBatch
// pending deliveries within preferredBatchSizeInKilobytes, at least one.
// A subscription that no longer batches gets batches of one.
func (a *Activities) ClaimBatch(ctx context.Context, in ClaimInput) (ClaimResult, error) {
	sub, err := a.Store.SubscriptionByID(ctx, in.SubscriptionID)
	if err != nil {
		return ClaimResult{}, err
	}
	c := store.BatchClaim{SubscriptionID: sub.ID, ID: in.BatchID, MaxEvents: 1, FullOnly: in.FullOnly}
	if eg := store.EventGridOf(sub.Options); eg.Batching() {
		c.MaxEvents, c.MaxBytes = eg.MaxEventsPerBatch, eg.PreferredBatchSizeKB*1024
	}
	b, err := a.Store.ClaimBatch(ctx, c)
	if err != nil {
		return ClaimResult{}, err
	}
	return ClaimResult{BatchID: b.ID, DeliveryIDs: b.DeliveryIDs, Remaining: b.Remaining, Gone: b.Gone}, nil
}

// BatchInput is the input of DeliverBatch: one attempt of one batch.
type BatchInput struct {
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
}

// DeliverBatch makes one HTTP request carrying every event of a batch and
// records it as an attempt of each of its deliveries, counted once against
// the endpoint (it saw one request). Like Deliver, it makes no request while
// the endpoint is disabled or frozen (Skipped), unless this is a probe to a
// disabled one, and tells the endpoint workflow what the request means for
// the endpoint's health.
func (a *Activities) DeliverBatch(ctx context.Context, in BatchInput) (DeliverResult, error) {
	if len(in.DeliveryIDs) == 0 {
		return DeliverResult{}, errors.New("activities: empty batch")
	}
	ts, err := a.Store.BatchTargets(ctx, in.DeliveryIDs)
	if err != nil {
		return DeliverResult{}, err
	}
	t := ts[0]
	// A frozen endpoint is never tried until an operator re-enables it
	// (POLICIES.md §workfront), not even by a probe.
	if t.EndpointState != policies.StateEnabled && !(in.Probe && t.EndpointState == policies.StateDisabled) {
		return DeliverResult{Skipped: true, EndpointState: t.EndpointState}, nil
	}
	eg := store.EventGridOf(t.Options)
	if eg == nil {
		eg = &store.EventGridSettings{Schema: store.SchemaEventGrid}
	}
	body, err := eventGridBody(ts, eg)
	if err != nil {
		return DeliverResult{}, err
	}
	one := DeliverInput{DeliveryID: in.DeliveryIDs[0], Attempt: in.Attempt, ScheduledAt: in.ScheduledAt,
		Timeout: in.Timeout, Probe: in.Probe, Success: in.Success, Health: in.Health}
	rec := a.post(ctx, t, one, body)
	rec.Success = rec.StatusCode != 0 && isSuccess(rec.StatusCode, in.Success)
	c, err := a.Store.RecordBatchAttempt(ctx, t.EndpointID, batchAttempts(rec, in.DeliveryIDs))
	if err != nil {
		return DeliverResult{}, err
	}
	a.watchHealth(ctx, one, rec, c)
	a.Logger.InfoContext(ctx, "batch_attempt_made", "batch_id", in.BatchID, "events", len(in.DeliveryIDs),
		"attempt", in.Attempt, "probe", in.Probe, "status_code", rec.StatusCode, "error_kind", rec.ErrorKind)
	return DeliverResult{
		EndpointState: c.State, StatusCode: rec.StatusCode, ErrorKind: rec.ErrorKind,
		Error: rec.ErrorMessage, DurationMs: rec.DurationMs, Success: rec.Success, Counters: c,
	}, nil
}

// batchAttempts is rec as the attempt of each delivery of a batch, in order.
func batchAttempts(rec store.Attempt, ids []string) []store.Attempt {
	as := make([]store.Attempt, len(ids))
	for i, id := range ids {
		as[i] = rec
		as[i].DeliveryID = id
	}
	return as
}

// BatchStatusInput is the input of SetBatchStatus.
type BatchStatusInput struct {
	DeliveryIDs   []string
	Status        string
	NextAttemptAt *time.Time
}

// SetBatchStatus records the in-flight status of every delivery of a batch.
// For "waiting" it returns, as SetStatus does, the endpoint's state read as
// each delivery was recorded waiting (the last one's): a batch that finds it
// enabled again re-attempts at once instead of waiting for a release that
// went out before it was recorded as waiting.
func (a *Activities) SetBatchStatus(ctx context.Context, in BatchStatusInput) (StatusResult, error) {
	var res StatusResult
	for _, id := range in.DeliveryIDs {
		if in.Status != "waiting" {
			if err := a.Store.SetInFlight(ctx, id, in.Status, in.NextAttemptAt); err != nil {
				return StatusResult{}, err
			}
			continue
		}
		state, err := a.Store.SetWaiting(ctx, id)
		if err != nil {
			return StatusResult{}, err
		}
		if state != "" {
			res.EndpointState = state
		}
	}
	return res, nil
}

// FinishBatchInput is the input of FinishBatch.
type FinishBatchInput struct {
	DeliveryIDs []string
	Status      string
	Reason      string
	LastStatus  int
	LastError   string
}

// FinishBatchResult is the result of FinishBatch.
type FinishBatchResult struct {
	DeadLetterIDs []string
}

// FinishBatch finishes every delivery of a batch as Finish does one.
func (a *Activities) FinishBatch(ctx context.Context, in FinishBatchInput) (FinishBatchResult, error) {
	var out FinishBatchResult
	for _, id := range in.DeliveryIDs {
		res, err := a.Finish(ctx, FinishInput{DeliveryID: id, Status: in.Status, Reason: in.Reason,
			LastStatus: in.LastStatus, LastError: in.LastError})
		if err != nil {
			return out, fmt.Errorf("activities: finish %s: %w", id, err)
		}
		if res.DeadLetterID != "" {
			out.DeadLetterIDs = append(out.DeadLetterIDs, res.DeadLetterID)
		}
	}
	return out, nil
}
