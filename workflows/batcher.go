package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// SignalWake tells a subscription's Batcher that deliveries are pending; its
// payload is the subscription's current resolved policy.
const SignalWake = "wake"

// Batcher tuning: how long a partial batch waits to fill, how long an idle
// batcher lives, and the history length at which it continues as new (well
// under Temporal's limits of 50,000 events and 10,000 signals per run).
const (
	batchLinger       = 150 * time.Millisecond
	batcherIdle       = time.Hour
	batcherMaxHistory = 4000
)

// BatcherInput is the input of the Batcher workflow.
type BatcherInput struct {
	SubscriptionID string
	Policy         policies.Policy
}

// BatcherResult is the result of the Batcher workflow.
type BatcherResult struct {
	Batches int
}

// BatcherWorkflowID is the id of a subscription's Batcher.
func BatcherWorkflowID(subscriptionID string) string { return "batcher/" + subscriptionID }

// BatcherStartOptions are the options the starter signals-with-start with.
func BatcherStartOptions(q Queues, subscriptionID string) client.StartWorkflowOptions {
	return wokenOptions(q, BatcherWorkflowID(subscriptionID), subscriptionID)
}

// wokenOptions are the options of a subscription's long-lived workflow that
// the starter signals-with-start (a Batcher, a Sequencer): on the main queue,
// found by the subscription's id, started again once it ended.
func wokenOptions(q Queues, workflowID, subscriptionID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    workflowID,
		TaskQueue:             q.Main,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrSubscriptionID.ValueSet(subscriptionID)),
	}
}

// BatchWorkflowID is the id of a claimed batch's Batch workflow.
func BatchWorkflowID(batchID string) string { return "batch/" + batchID }

// BatchStartOptions are the options the sweeper starts a stranded batch's
// Batch workflow with: those the Batcher starts it with as a child.
func BatchStartOptions(q Queues, batchID, subscriptionID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    BatchWorkflowID(batchID),
		TaskQueue:             q.Main,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrSubscriptionID.ValueSet(subscriptionID)),
	}
}

// Batcher groups the pending deliveries of an output-batching subscription
// (docs/policies.md#eventgrid-edge) into batches and runs each as a Batch child
// workflow. Full batches go at once; a partial one waits batchLinger to fill.
// Woken by SignalWake; ends after batcherIdle without work or when the
// subscription is deleted; continues as new to bound its history.
func Batcher(ctx workflow.Context, in BatcherInput) (BatcherResult, error) {
	b := &batcher{ctx: ctx, in: in, wake: workflow.GetSignalChannel(ctx, SignalWake)}
	b.detached = workflow.GetVersion(ctx, changeDetachedChildren, workflow.DefaultVersion, 1) >= 1
	return b.run()
}

type batcher struct {
	ctx     workflow.Context
	in      BatcherInput
	wake    workflow.ReceiveChannel
	batches int
	claimed int // batches claimed this run: numbers the next batch's id
	// detached is true from changeDetachedChildren on.
	detached bool
}

func (b *batcher) run() (BatcherResult, error) {
	lingered := false
	for {
		if workflow.GetInfo(b.ctx).GetCurrentHistoryLength() > batcherMaxHistory {
			b.drain()
			return BatcherResult{}, workflow.NewContinueAsNewError(b.ctx, Batcher, b.in)
		}
		res, err := b.claim(!lingered)
		if err != nil {
			return BatcherResult{}, err
		}
		if res.BatchID != "" {
			b.dispatch(res)
			if res.Remaining > 0 {
				continue
			}
		}
		if res.Remaining > 0 && !lingered {
			if err := workflow.Sleep(b.ctx, batchLinger); err != nil {
				return BatcherResult{}, err
			}
			b.drain()
			lingered = true
			continue
		}
		if res.Gone {
			return BatcherResult{Batches: b.batches}, nil
		}
		lingered = false
		if !b.waitForWork() {
			return BatcherResult{Batches: b.batches}, b.cancelled()
		}
	}
}

// cancelled is the error a Batcher that stops waiting closes with: a
// cancellation when it was cancelled (from changeDetachedChildren on), so
// that it closes as Canceled, else none (it was idle).
func (b *batcher) cancelled() error {
	if b.detached && b.ctx.Err() != nil {
		return temporal.NewCanceledError()
	}
	return nil
}

// claim runs the ClaimBatch activity.
func (b *batcher) claim(fullOnly bool) (ClaimResult, error) {
	ctx := workflow.WithActivityOptions(b.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
	var res ClaimResult
	in := ClaimInput{SubscriptionID: b.in.SubscriptionID, BatchID: b.nextBatchID(), FullOnly: fullOnly}
	err := workflow.ExecuteActivity(ctx, ActivityClaimBatch, in).Get(ctx, &res)
	if err == nil && res.BatchID != "" {
		b.claimed++
	}
	return res, err
}

// nextBatchID is the id of the next batch this run claims: deterministic, so
// that a retried ClaimBatch returns the batch its first try claimed instead of
// claiming the next one. The run id makes it unique across runs.
func (b *batcher) nextBatchID() string {
	return fmt.Sprintf("batch_%s_%d", workflow.GetInfo(b.ctx).WorkflowExecution.RunID, b.claimed)
}

// dispatch starts the Batch child workflow of a claimed batch and waits only
// until it has started: it outlives the batcher (abandoned on close). A batch
// whose workflow already started (a claim replayed) is done; any other
// failure is logged and the batcher goes on: the sweeper starts the Batch
// workflow of a batch left without one (starter.SweepOnce).
func (b *batcher) dispatch(res ClaimResult) {
	ctx := workflow.WithChildOptions(detach(b.ctx, b.detached), workflow.ChildWorkflowOptions{
		WorkflowID:            BatchWorkflowID(res.BatchID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrSubscriptionID.ValueSet(b.in.SubscriptionID)),
	})
	in := BatchInput{BatchID: res.BatchID, SubscriptionID: b.in.SubscriptionID, DeliveryIDs: res.DeliveryIDs,
		Policy: b.in.Policy, PublishedAt: res.PublishedAt, PublishedAts: res.PublishedAts}
	f := workflow.ExecuteChildWorkflow(ctx, Batch, in)
	b.batches++
	err := f.GetChildWorkflowExecution().Get(b.ctx, nil)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		workflow.GetLogger(b.ctx).Error("batch_dispatch_failed", "batch_id", res.BatchID,
			"subscription_id", b.in.SubscriptionID, "error", err)
	}
}

// drain takes every pending wake signal, keeping the newest policy.
func (b *batcher) drain() bool {
	got := false
	for {
		var p policies.Policy
		if !b.wake.ReceiveAsync(&p) {
			return got
		}
		if p.Name != "" {
			b.in.Policy = p
		}
		got = true
	}
}

// waitForWork waits for a wake signal; false after batcherIdle without one.
func (b *batcher) waitForWork() bool { return awaitWake(b.ctx, b.wake, batcherIdle, b.drain) }

// awaitWake waits for a signal on wake, at most idle, then takes the
// pending ones (drain); it tells whether there was one.
func awaitWake(wctx workflow.Context, wake workflow.ReceiveChannel, idle time.Duration, drain func() bool) bool {
	ctx, cancel := workflow.WithCancel(wctx)
	defer cancel()
	woken := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(wake, func(workflow.ReceiveChannel, bool) { woken = true })
	sel.AddFuture(workflow.NewTimer(ctx, idle), func(workflow.Future) {})
	sel.Select(ctx)
	return drain() || woken
}
