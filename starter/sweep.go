package starter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// SweepGrace is how long a delivery stays unstarted before the worker's
// sweeper starts it (worker.Run): past the time a start takes, so that it
// starts only what publishing's start failed or lost, and what a start
// queue has not leased (Queue.lease).
const SweepGrace = 30 * time.Second

// DefaultBatchGrace is how old a batch whose deliveries are all still pending
// must be before the sweeper checks that its Batch workflow exists.
const DefaultBatchGrace = 2 * time.Minute

// SweepOnce is one sweep: it drops the unstarted deliveries of Event Grid
// subscriptions awaiting their handshake that can no longer be delivered,
// wakes the Batcher of every batching subscription with unstarted
// deliveries, starts the other deliveries never started (up to 500, those
// whose start failed put off; those whose start failed too often end),
// starts the Batch workflow of any batch left without one, settles the
// attempts a stopped worker left open (SettleOpen), and reconciles the
// deliveries in flight whose workflow is closed or gone (Reconcile, asking
// visibility first). Only deliveries and batches older than grace count.
func (s *Starter) SweepOnce(ctx context.Context, grace time.Duration) error {
	errs := []error{s.sweepAwaiting(ctx, grace), s.wakeBatchers(ctx, grace)}
	ds, err := s.Store.UnstartedDeliveries(ctx, grace, 500)
	if err == nil && len(ds) > 0 {
		s.Logger.WarnContext(ctx, "sweeper_starting_deliveries", "count", len(ds))
		if err = s.Start(ctx, ds); err == nil {
			s.Metrics.SweeperStarted(len(ds))
		}
	}
	errs = append(errs, err, s.recoverBatches(ctx), s.SettleOpen(ctx, SettleAge), s.reconcile(ctx, grace, true))
	return errors.Join(errs...)
}

// sweepAwaiting drops the unstarted deliveries of subscriptions awaiting
// their handshake when the subscription failed validation or was deleted,
// and those older than the subscription's time to live otherwise.
func (s *Starter) sweepAwaiting(ctx context.Context, grace time.Duration) error {
	subs, err := s.Store.SubscriptionsWithUnstarted(ctx, grace, true)
	errs := []error{err}
	for _, sub := range subs {
		reason, older := store.ReasonValidationFailed, grace
		switch {
		case sub.Deleted:
			reason = store.ReasonDeletedBeforeValidation
		case eventgrid.Of(sub.Options).Validation == eventgrid.ValidationPending:
			p, err := PolicyWith(sub.Subscription, s.Defaults)
			if err != nil || p.TTL <= 0 {
				errs = append(errs, err)
				continue
			}
			reason, older = store.ReasonTTLAwaitingValidation, max(p.TTL, grace)
		}
		n, err := s.Store.DropUnstarted(ctx, sub.ID, reason, older)
		if n > 0 {
			s.Logger.WarnContext(ctx, "sweeper_dropped_awaiting", "subscription_id", sub.ID, "count", n, "reason", reason)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// wakeBatchers wakes, once per sweep, the Batcher of every batching
// subscription with unstarted deliveries: the Batcher claims them itself.
func (s *Starter) wakeBatchers(ctx context.Context, grace time.Duration) error {
	subs, err := s.Store.SubscriptionsWithUnstarted(ctx, grace, false)
	errs := []error{err}
	for _, sub := range subs {
		errs = append(errs, s.wakeBatcher(ctx, sub.Subscription))
	}
	return errors.Join(errs...)
}

// recoverBatches starts the Batch workflow of every batch whose deliveries
// are all still pending and whose workflow does not exist (its Batcher
// failed to start it), with the id and input the Batcher would have used.
func (s *Starter) recoverBatches(ctx context.Context) error {
	grace := s.BatchGrace
	if grace == 0 {
		grace = DefaultBatchGrace
	}
	bs, err := s.Store.StrandedBatches(ctx, grace, 100)
	errs := []error{err}
	for _, b := range bs {
		_, err := s.Temporal.DescribeWorkflowExecution(ctx, workflows.BatchWorkflowID(b.ID), "")
		var missing *serviceerror.NotFound
		if !errors.As(err, &missing) {
			errs = append(errs, err) // nil: the workflow exists
			continue
		}
		errs = append(errs, s.startBatch(ctx, b))
	}
	return errors.Join(errs...)
}

// startBatch starts a stranded batch's Batch workflow.
func (s *Starter) startBatch(ctx context.Context, b store.StrandedBatch) error {
	sub, err := s.Store.SubscriptionByID(ctx, b.SubscriptionID)
	if err != nil {
		return err
	}
	p, err := runPolicy(sub, s.Defaults)
	if err != nil {
		return err
	}
	in := workflows.BatchInput{BatchID: b.ID, SubscriptionID: b.SubscriptionID, DeliveryIDs: b.DeliveryIDs,
		Policy: p, PublishedAt: b.PublishedAt}
	s.Logger.WarnContext(ctx, "sweeper_starting_batch", "batch_id", b.ID, "subscription_id", b.SubscriptionID)
	_, err = s.Temporal.ExecuteWorkflow(ctx, workflows.BatchStartOptions(s.Queues.OrDefault(), b.ID, b.SubscriptionID), workflows.Batch, in)
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("starter: start batch %s: %w", b.ID, err)
	}
	return nil
}
