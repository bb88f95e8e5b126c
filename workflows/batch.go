package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// BatchInput is the input of the Batch workflow: the ids of the deliveries
// one request carries, and their subscription's resolved policy.
type BatchInput struct {
	BatchID        string
	SubscriptionID string
	DeliveryIDs    []string
	Policy         policies.Policy
	// PublishedAt is when the batch's oldest delivery was stored: the
	// time-to-live counts from it, as for a single delivery
	// (docs/policies.md#eventgrid-edge). Zero (batches started before it was
	// set): from the workflow's start.
	PublishedAt time.Time
	// PublishedAts are when each delivery was stored, in DeliveryIDs' order:
	// each keeps its own time-to-live. Empty (batches claimed before, or
	// started by the sweeper): every one counts from PublishedAt.
	PublishedAts []time.Time
}

// Batch delivers one batch of an output-batching subscription
// (docs/policies.md#eventgrid-edge) as Delivery does one event: one
// DeliverBatch activity per attempt, durable timers on the policy's schedule,
// and the same ending for every delivery in it. Each attempt is recorded for
// each delivery, and counted once against the endpoint. While the endpoint is
// disabled or frozen the batch waits, as a Delivery does, for a release or
// probe signal (sent to "batch/<batch id>") or the policy's deadline.
func Batch(ctx workflow.Context, in BatchInput) (DeliveryResult, error) {
	b := &batch{retries: retries{ctx: ctx, policy: in.Policy, seed: policies.Seed(in.BatchID)}, in: in,
		started: workflow.Now(ctx)}
	res, err := b.run(b, in.PublishedAt)
	if err != nil && ctx.Err() != nil && workflow.GetVersion(ctx, changeBatchCancel, workflow.DefaultVersion, 1) >= 1 {
		// Cancelled (the Web UI's Cancel): every delivery of the batch
		// ends as a cancelled Delivery does.
		b.ctx, _ = workflow.NewDisconnectedContext(ctx)
		if res, err = b.finish(policies.StatusDeadLettered, ReasonCancelled); err == nil {
			err = temporal.NewCanceledError(res)
		}
	}
	return res, err
}

// changeBatchCancel (issue 52) marks the change after which a cancelled
// Batch ends its deliveries dead-lettered with ReasonCancelled.
const changeBatchCancel = "batch-cancel"

type batch struct {
	retries
	in      BatchInput
	started time.Time // the first attempt's time, before any event's publication counts
}

// attempt runs DeliverBatch once, on the deliveries or the retries queue.
func (b *batch) attempt(scheduled time.Time, probe bool) (DeliverResult, error) {
	ctx := attemptOptions(b.ctx, b.pr.Attempts, b.in.Policy.Timeout)
	in := DeliverBatchInput{
		BatchID: b.in.BatchID, DeliveryIDs: b.in.DeliveryIDs, Attempt: b.pr.Attempts,
		ScheduledAt: scheduled, Timeout: b.in.Policy.Timeout, Probe: probe,
		Success: b.in.Policy.SuccessCodes, Health: b.in.Policy.Health, MayThrottle: true,
	}
	var res DeliverResult
	if err := workflow.ExecuteActivity(ctx, ActivityDeliverBatch, in).Get(ctx, &res); err != nil {
		workflow.GetLogger(b.ctx).Warn("batch_attempt_failed_internally", "error", err)
		return res, err
	}
	return res, nil
}

// waitForEndpoint parks the batch while its endpoint is disabled or frozen,
// as Delivery's does: every delivery of the batch is recorded waiting, so the
// endpoint workflow's release (or probe) reaches this workflow, until a
// signal comes or the policy's deadline passes. It reports whether the next
// attempt is a probe, and false ok at the deadline.
func (b *batch) waitForEndpoint() (probe bool, ok bool) {
	deadline := b.deadline()
	if !deadline.IsZero() && !deadline.After(workflow.Now(b.ctx)) {
		return false, false
	}
	// The release is sent once per waiting delivery, so a batch may hold
	// stale ones from an earlier wait; a release sent since the last attempt
	// shows as the enabled state read below.
	release := workflow.GetSignalChannel(b.ctx, SignalRelease)
	for release.ReceiveAsync(nil) {
	}
	if b.setStatus(policies.StatusWaiting, nil) == policies.StateEnabled {
		return false, true
	}
	return awaitEndpoint(b.ctx, deadline, false)
}

func (b *batch) bookkeeping() workflow.Context {
	return workflow.WithActivityOptions(b.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
}

// setStatus records an in-flight status of every delivery of the batch; for
// "waiting" it returns the endpoint's state as recorded with it.
func (b *batch) setStatus(status policies.Status, next *time.Time) string {
	in := BatchStatusInput{DeliveryIDs: b.in.DeliveryIDs, Status: status, NextAttemptAt: next}
	var res StatusResult
	if err := workflow.ExecuteActivity(b.bookkeeping(), ActivitySetBatchStatus, in).Get(b.ctx, &res); err != nil {
		workflow.GetLogger(b.ctx).Error("set_batch_status_failed", "error", err)
	}
	return res.EndpointState
}

func (b *batch) finish(status policies.Status, reason string) (DeliveryResult, error) {
	return b.finishSome(b.in.DeliveryIDs, status, reason)
}

// finishSome finishes the deliveries ids of the batch.
func (b *batch) finishSome(ids []string, status policies.Status, reason string) (DeliveryResult, error) {
	in := FinishBatchInput{DeliveryIDs: ids, Status: status, Reason: reason,
		LastStatus: b.last.StatusCode, LastError: b.last.Error, OnExhausted: b.in.Policy.OnExhausted}
	if err := workflow.ExecuteActivity(b.bookkeeping(), ActivityFinishBatch, in).Get(b.ctx, nil); err != nil {
		return DeliveryResult{}, err
	}
	return DeliveryResult{Status: status, Attempts: b.pr.Attempts, Reason: reason}, nil
}

// changeOwnTTL marks docs/policies.md#iot-edge-output-batching (issue 53):
// from version 1 each event of a batch keeps its own time-to-live; batches
// started before end every event with the oldest's.
const changeOwnTTL = "batch-own-ttl"

// outlive ends the events of the batch whose own time-to-live is over (ends
// says it of an event's progress), when others go on: those stay in the
// batch, and its progress counts from the oldest of them.
func (b *batch) outlive(ends func(policies.Progress) bool) bool {
	if len(b.in.PublishedAts) != len(b.in.DeliveryIDs) {
		return false
	}
	var over, left []string
	var leftAt []time.Time
	for i, id := range b.in.DeliveryIDs {
		pr := b.pr
		pr.FirstAttemptAt = earliest(b.started, b.in.PublishedAts[i])
		if ends(pr) {
			over = append(over, id)
			continue
		}
		left, leftAt = append(left, id), append(leftAt, b.in.PublishedAts[i])
	}
	if len(left) == 0 || len(over) == 0 || workflow.GetVersion(b.ctx, changeOwnTTL, workflow.DefaultVersion, 1) < 1 {
		return false
	}
	if _, err := b.finishSome(over, b.policy.FinalStatus(), string(policies.TTLExceeded)); err != nil {
		workflow.GetLogger(b.ctx).Error("finish_batch_failed", "batch_id", b.in.BatchID, "error", err)
	}
	b.in.DeliveryIDs, b.in.PublishedAts = left, leftAt
	b.pr.FirstAttemptAt = earliest(b.started, slices.MinFunc(leftAt, time.Time.Compare))
	return true
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
