package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// SignalNext tells a Sequencer that deliveries joined its sequence; its
// payload is a SequencerWake.
const SignalNext = "next"

// Sequencer tuning: how long an idle sequencer lives, the history length at
// which it continues as new (well under Temporal's limits of 50,000 events
// and 10,000 signals per run), and the wait before it looks again at a
// delivery whose workflow it could not start.
const (
	sequencerIdle        = time.Minute
	sequencerMaxHistory  = 4000
	sequencerBackoffMin  = 5 * time.Second
	sequencerBackoffMax  = time.Minute
	sequencerLookTimeout = 30 * time.Second
)

// SequencerInput is the input of the Sequencer workflow: one sequence,
// (subscription, ordering key), and what its deliveries start with.
type SequencerInput struct {
	SubscriptionID string
	OrderingKey    string
	// URL (for the deliveries' memo) and Policy are the subscription's as
	// of the latest wake.
	URL    string
	Policy policies.Policy
	// After is the number of the last delivery of the sequence that ended:
	// zero at a first start, carried over when the run continues as new.
	After int64
}

// SequencerWake is the payload of SignalNext: the subscription's URL and
// resolved policy now, which the deliveries started after it get.
type SequencerWake struct {
	URL    string
	Policy policies.Policy
}

// SequencerResult is the result of a Sequencer run: how many deliveries of
// its sequence ended during it.
type SequencerResult struct {
	Ended int
}

// NextInput is the input of NextInSequence.
type NextInput struct {
	SubscriptionID string
	OrderingKey    string
	After          int64
}

// NextResult is the next delivery of a sequence; Found is false when none
// is under way after NextInput.After.
type NextResult struct {
	Found      bool
	DeliveryID string
	WorkflowID string
	EndpointID string
	EventType  string
	Seq        int64
	// Fresh is true when no workflow has taken the delivery up yet: still
	// pending, never attempted. Its Sequencer makes its first attempt
	// itself (attemptFirst).
	Fresh bool `json:",omitempty"`
}

// SequencerWorkflowID is the id of the Sequencer of a subscription's
// ordering key: "sequence/<subscription>/<key>".
func SequencerWorkflowID(subscriptionID, key string) string {
	return "sequence/" + subscriptionID + "/" + key
}

// SequencerStartOptions are the options the starter signals-with-start a
// Sequencer with.
func SequencerStartOptions(q Queues, subscriptionID, key string) client.StartWorkflowOptions {
	return wokenOptions(q, SequencerWorkflowID(subscriptionID, key), subscriptionID)
}

// Sequencer delivers the deliveries of one ordered subscription's ordering
// key one at a time, in the order of their numbers (docs/ordering.md): it
// makes each one's first attempt itself and moves on if that delivered it
// (attemptFirst); otherwise it starts the delivery's Delivery workflow as a
// child, with the id and options a Delivery starts with, and goes on only
// once that child has ended (delivered, dead-lettered, dropped or queued).
// PostgreSQL says which is next (NextInSequence), so a wake says only "look
// again". Woken by SignalNext; ends after sequencerIdle without work;
// continues as new to bound its history. Runs from before
// changeSequencerFirstAttempt start a child for every delivery.
func Sequencer(ctx workflow.Context, in SequencerInput) (SequencerResult, error) {
	s := &sequencer{ctx: ctx, in: in, wake: workflow.GetSignalChannel(ctx, SignalNext)}
	s.detached = workflow.GetVersion(ctx, changeDetachedChildren, workflow.DefaultVersion, 1) >= 1
	s.firstAttempts = workflow.GetVersion(ctx, changeSequencerFirstAttempt, workflow.DefaultVersion, 1) >= 1
	return s.run()
}

// changeDetachedChildren (issue 52) marks the change after which cancelling a
// Sequencer or a Batcher (the Web UI's Cancel) stops only it: the Delivery
// or Batch children it started are not cancelled with it (detach), and a
// Sequencer waiting on its child stops waiting. Runs started before replay
// as they ran.
const changeDetachedChildren = "detached-children"

// detach is ctx for starting a child that the parent's cancellation does
// not reach, when on; ctx itself otherwise.
func detach(ctx workflow.Context, on bool) workflow.Context {
	if !on {
		return ctx
	}
	d, _ := workflow.NewDisconnectedContext(ctx)
	return d
}

type sequencer struct {
	ctx   workflow.Context
	in    SequencerInput
	wake  workflow.ReceiveChannel
	ended int
	// failedStarts counts the starts in a row that failed.
	failedStarts int
	// detached is true from changeDetachedChildren on.
	detached bool
	// firstAttempts is true from changeSequencerFirstAttempt on;
	// taskAttempts counts the first attempts made in the workflow task
	// that began at history length taskLength (boundTask).
	firstAttempts            bool
	taskLength, taskAttempts int
}

func (s *sequencer) run() (SequencerResult, error) {
	for {
		s.drain()
		if workflow.GetInfo(s.ctx).GetCurrentHistoryLength() > sequencerMaxHistory {
			return SequencerResult{Ended: s.ended}, workflow.NewContinueAsNewError(s.ctx, Sequencer, s.in)
		}
		next, err := s.next()
		if err != nil {
			return SequencerResult{Ended: s.ended}, err
		}
		switch {
		case next.Found && s.firstAttempts:
			s.attemptFirst(next)
			continue
		case next.Found:
			s.deliver(next, nil, time.Time{})
			continue
		}
		if !s.waitForWork() {
			return SequencerResult{Ended: s.ended}, nil
		}
	}
}

// next asks PostgreSQL for the next delivery under way, as a local
// activity that is retried until it answers.
func (s *sequencer) next() (NextResult, error) {
	ctx := workflow.WithLocalActivityOptions(s.ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: sequencerLookTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
	in := NextInput{SubscriptionID: s.in.SubscriptionID, OrderingKey: s.in.OrderingKey, After: s.in.After}
	var res NextResult
	err := workflow.ExecuteLocalActivity(ctx, ActivityNextInSequence, in).Get(ctx, &res)
	return res, err
}

// deliver runs one delivery's workflow as a child and waits for it to end,
// however it ends; the sequence then moves past it. first, when set, is
// the first attempt this sequencer made of it, which the child goes on
// from, its time counting from scheduled (zero: from its start). A child that cannot be started (its workflow exists:
// one a run of this sequencer started before it was terminated or reset)
// is looked at again after a back-off: the sequence moves past it once it
// is no longer under way.
func (s *sequencer) deliver(n NextResult, first *FirstAttempt, scheduled time.Time) {
	in := DeliveryInput{
		DeliveryID: n.DeliveryID, SubscriptionID: s.in.SubscriptionID, EndpointID: n.EndpointID,
		EventType: n.EventType, URL: s.in.URL, Policy: s.in.Policy, Version: DeliveryVersion,
	}
	if first != nil {
		in.First, in.PublishedAt = first, scheduled
	}
	ctx := workflow.WithChildOptions(detach(s.ctx, s.detached), deliveryChildOptions(n.WorkflowID, in))
	f := workflow.ExecuteChildWorkflow(ctx, Delivery, in)
	if err := f.GetChildWorkflowExecution().Get(s.ctx, nil); err != nil {
		s.failedStarts++
		workflow.GetLogger(s.ctx).Warn("sequenced_start_failed", "delivery_id", n.DeliveryID, "error", err)
		_ = workflow.Sleep(s.ctx, min(sequencerBackoffMin<<min(s.failedStarts-1, 4), sequencerBackoffMax))
		return
	}
	s.failedStarts = 0
	if s.detached && !s.awaitChild(f) {
		return // cancelled: the child goes on; the next run waits for it
	}
	var res DeliveryResult
	if err := f.Get(s.ctx, &res); err != nil {
		workflow.GetLogger(s.ctx).Warn("sequenced_delivery_failed", "delivery_id", n.DeliveryID, "error", err)
	}
	s.in.After = n.Seq
	s.ended++
}

// awaitChild waits until the child f ends, false if the Sequencer is
// cancelled first.
func (s *sequencer) awaitChild(f workflow.Future) bool {
	sel := workflow.NewSelector(s.ctx)
	sel.AddFuture(f, func(workflow.Future) {})
	sel.AddReceive(s.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(s.ctx)
	return f.IsReady()
}

// drain takes every pending wake, keeping the newest URL and policy; it
// tells whether there was one.
func (s *sequencer) drain() bool {
	got := false
	for {
		var w SequencerWake
		if !s.wake.ReceiveAsync(&w) {
			return got
		}
		if w.Policy.Name != "" {
			s.in.URL, s.in.Policy = w.URL, w.Policy
		}
		got = true
	}
}

// waitForWork waits for a wake; false after sequencerIdle without one.
func (s *sequencer) waitForWork() bool { return awaitWake(s.ctx, s.wake, sequencerIdle, s.drain) }

// deliveryChildOptions are the options a Sequencer starts a Delivery with
// as its child: those of DeliveryStartOptions (but eager start), on the
// Sequencer's own task queue; the child outlives a Sequencer that is
// terminated (abandoned).
func deliveryChildOptions(workflowID string, in DeliveryInput) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            workflowID,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: deliveryAttributes(in),
		Memo:                  map[string]any{"url": in.URL},
	}
}
