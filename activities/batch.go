package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// ClaimBatch claims the next batch of a batching Event Grid subscription
// (docs/policies.md#iot-edge-output-batching): up to maxEventsPerBatch
// pending deliveries within preferredBatchSizeInKilobytes, at least one.
// A subscription that no longer batches gets batches of one.
func (a *Activities) ClaimBatch(ctx context.Context, in workflows.ClaimInput) (workflows.ClaimResult, error) {
	sub, err := a.Store.SubscriptionByID(ctx, in.SubscriptionID)
	if err != nil {
		return workflows.ClaimResult{}, err
	}
	c := store.BatchClaim{SubscriptionID: sub.ID, ID: in.BatchID, FullOnly: in.FullOnly,
		Topic: eventgrid.Topic(a.EventGridTopic, sub.AccountID)}
	c.MaxEvents, c.MaxBytes = eventgrid.Of(sub.Options).BatchLimits()
	b, err := a.Store.ClaimBatch(ctx, c)
	if err != nil {
		return workflows.ClaimResult{}, err
	}
	return workflows.ClaimResult{BatchID: b.ID, DeliveryIDs: b.DeliveryIDs, Remaining: b.Remaining, Gone: b.Gone,
		PublishedAt: b.PublishedAt, PublishedAts: b.PublishedAts}, nil
}

// DeliverBatch makes one HTTP request carrying every event of a batch and
// records it as an attempt of each of its deliveries, counted once against
// the endpoint (it saw one request). Like Deliver, it makes no request while
// the endpoint is disabled or frozen (Skipped), unless this is a probe to a
// disabled one, and tells the endpoint workflow what the request means for
// the endpoint's health.
func (a *Activities) DeliverBatch(ctx context.Context, in workflows.DeliverBatchInput) (workflows.DeliverResult, error) {
	if len(in.DeliveryIDs) == 0 {
		return workflows.DeliverResult{}, errors.New("activities: empty batch")
	}
	ts, err := a.Store.BatchTargets(ctx, in.DeliveryIDs)
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	t := ts[0]
	if ended(ts) {
		return workflows.DeliverResult{Ended: t.Status}, nil
	}
	if !policies.MayAttempt(t.EndpointState, in.Probe) {
		return workflows.DeliverResult{Skipped: true, EndpointState: t.EndpointState}, nil
	}
	eg := eventgrid.Of(t.Options)
	if eg == nil {
		eg = &eventgrid.Settings{Schema: eventgrid.SchemaEventGrid}
	}
	body, err := a.eventGridBody(ts, eg)
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	one := workflows.DeliverInput{DeliveryID: in.DeliveryIDs[0], Attempt: in.Attempt, ScheduledAt: in.ScheduledAt,
		Timeout: in.Timeout, Probe: in.Probe, Success: in.Success, Health: in.Health,
		MayThrottle: in.MayThrottle}
	rec, done, err := a.send(ctx, t, one, body, in.DeliveryIDs, "")
	if res, ok := throttled(err); ok {
		return res, nil
	}
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	a.Logger.InfoContext(ctx, "batch_attempt_made", "batch_id", in.BatchID, "events", len(in.DeliveryIDs),
		"attempt", in.Attempt, "probe", in.Probe, "status_code", rec.StatusCode, "error_kind", rec.ErrorKind)
	return resultOf(rec, done.Counters), nil
}

// SetBatchStatus records the in-flight status of every delivery of a batch.
// For "waiting" it returns, as SetStatus does, the endpoint's state read as
// each delivery was recorded waiting (the last one's): a batch that finds it
// enabled again re-attempts at once instead of waiting for a release that
// went out before it was recorded as waiting.
func (a *Activities) SetBatchStatus(ctx context.Context, in workflows.BatchStatusInput) (workflows.StatusResult, error) {
	var res workflows.StatusResult
	for _, id := range in.DeliveryIDs {
		if in.Status != policies.StatusWaiting {
			if err := a.Store.SetInFlight(ctx, id, in.Status, in.NextAttemptAt); err != nil {
				return workflows.StatusResult{}, err
			}
			continue
		}
		state, err := a.Store.SetWaiting(ctx, id)
		if err != nil {
			return workflows.StatusResult{}, err
		}
		if state != "" {
			res.EndpointState = state
		}
	}
	return res, nil
}

// FinishBatch finishes every delivery of a batch as Finish does one.
func (a *Activities) FinishBatch(ctx context.Context, in workflows.FinishBatchInput) (workflows.FinishBatchResult, error) {
	var out workflows.FinishBatchResult
	for _, id := range in.DeliveryIDs {
		res, err := a.Finish(ctx, workflows.FinishInput{DeliveryID: id, Status: in.Status, Reason: in.Reason,
			LastStatus: in.LastStatus, LastError: in.LastError, OnExhausted: in.OnExhausted})
		if err != nil {
			return out, fmt.Errorf("activities: finish %s: %w", id, err)
		}
		if res.DeadLetterID != "" {
			out.DeadLetterIDs = append(out.DeadLetterIDs, res.DeadLetterID)
		}
	}
	return out, nil
}

// ended reports whether every delivery of ts has ended already (a batch's
// deliveries end together): no request is sent for them.
func ended(ts []store.Target) bool {
	for _, t := range ts {
		if !t.Status.IsFinal() {
			return false
		}
	}
	return true
}
