package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
)

// BatchInput is the input of the Batch workflow: the ids of the deliveries
// one request carries, and their subscription's resolved policy.
type BatchInput struct {
	BatchID        string
	SubscriptionID string
	DeliveryIDs    []string
	Policy         policies.Policy
}

// Batch delivers one batch of an output-batching subscription (POLICIES.md
// §eventgrid-edge) as Delivery does one event: one DeliverBatch activity per
// attempt, durable timers on the policy's schedule, and the same ending for
// every delivery in it. Each attempt is recorded for each delivery.
func Batch(ctx workflow.Context, in BatchInput) (DeliveryResult, error) {
	b := &batch{ctx: ctx, in: in, seed: policies.Seed(in.BatchID)}
	return b.run()
}

type batch struct {
	ctx  workflow.Context
	in   BatchInput
	seed uint64
	pr   policies.Progress
	last activities.DeliverResult
}

func (b *batch) run() (DeliveryResult, error) {
	b.pr.FirstAttemptAt = workflow.Now(b.ctx)
	scheduled := b.pr.FirstAttemptAt
	for {
		b.last = b.attempt(scheduled)
		b.pr.Attempts++
		now := workflow.Now(b.ctx)
		switch b.in.Policy.Classify(b.last.StatusCode) {
		case policies.Delivered:
			return b.finish("delivered", "")
		case policies.Undeliverable:
			status := "dropped"
			if b.in.Policy.DeadLettering {
				status = "dead_lettered"
			}
			return b.finish(status, fmt.Sprintf("Undeliverable: HTTP %d", b.last.StatusCode))
		}
		if b.pr.FirstFailureAt.IsZero() {
			b.pr.FirstFailureAt = now
		}
		b.pr.LastFailureAt = now
		due, stop := b.in.Policy.Next(b.pr, b.seed)
		if stop != policies.NoStop {
			return b.finish(b.in.Policy.FinalStatus(), string(stop))
		}
		b.setStatus("retrying", &due)
		// Measured after the bookkeeping (as in Delivery), which Temporal may
		// have retried; at least 1 ms keeps one timer command per retry.
		wait := max(due.Sub(workflow.Now(b.ctx)), time.Millisecond)
		if err := workflow.NewTimer(b.ctx, wait).Get(b.ctx, nil); err != nil {
			return DeliveryResult{}, err
		}
		scheduled = due
	}
}

// attempt runs DeliverBatch once, on the deliveries or the retries queue.
func (b *batch) attempt(scheduled time.Time) activities.DeliverResult {
	ctx := attemptOptions(b.ctx, b.pr.Attempts, b.in.Policy.Timeout)
	in := activities.BatchInput{
		BatchID: b.in.BatchID, DeliveryIDs: b.in.DeliveryIDs, Attempt: b.pr.Attempts,
		ScheduledAt: scheduled, Timeout: b.in.Policy.Timeout, Success: b.in.Policy.SuccessCodes,
	}
	var res activities.DeliverResult
	if err := workflow.ExecuteActivity(ctx, a.DeliverBatch, in).Get(ctx, &res); err != nil {
		workflow.GetLogger(b.ctx).Warn("batch_attempt_failed_internally", "error", err)
		return activities.DeliverResult{ErrorKind: "internal", Error: err.Error()}
	}
	return res
}

func (b *batch) bookkeeping() workflow.Context {
	return workflow.WithActivityOptions(b.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
}

func (b *batch) setStatus(status string, next *time.Time) {
	in := activities.BatchStatusInput{DeliveryIDs: b.in.DeliveryIDs, Status: status, NextAttemptAt: next}
	if err := workflow.ExecuteActivity(b.bookkeeping(), a.SetBatchStatus, in).Get(b.ctx, nil); err != nil {
		workflow.GetLogger(b.ctx).Error("set_batch_status_failed", "error", err)
	}
}

func (b *batch) finish(status, reason string) (DeliveryResult, error) {
	in := activities.FinishBatchInput{DeliveryIDs: b.in.DeliveryIDs, Status: status, Reason: reason,
		LastStatus: b.last.StatusCode, LastError: b.last.Error}
	if err := workflow.ExecuteActivity(b.bookkeeping(), a.FinishBatch, in).Get(b.ctx, nil); err != nil {
		return DeliveryResult{}, err
	}
	return DeliveryResult{Status: status, Attempts: b.pr.Attempts, Reason: reason}, nil
}
