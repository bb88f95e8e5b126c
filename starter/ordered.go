package starter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/workflows"
)

// sequenceKey names one sequence: a subscription and an ordering key.
type sequenceKey struct{ subscriptionID, orderingKey string }

// routeOrdered takes out of ds the deliveries numbered in a sequence (those
// of ordered subscriptions, docs/ordering.md): they are not started one by
// one, their sequence's Sequencer starts them in order. It is woken once per
// sequence per call (signal-with-start); the deliveries of a sequence whose
// Sequencer was woken count as started (woken), the others as failed starts
// (the sweeper wakes it again). Without such deliveries it does nothing.
func (s *Starter) routeOrdered(ctx context.Context, ds []store.Delivery, subs map[string]store.Subscription) (rest []store.Delivery, woken, failed []string, err error) {
	if !slices.ContainsFunc(ds, func(d store.Delivery) bool { return d.Seq != nil }) {
		return ds, nil, nil, nil
	}
	groups := map[sequenceKey][]store.Delivery{}
	var order []sequenceKey
	for _, d := range ds {
		if d.Started || d.Seq == nil {
			rest = append(rest, d)
			continue
		}
		k := sequenceKey{d.SubscriptionID, *d.OrderingKey}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], d)
	}
	var errs []error
	for _, k := range order {
		ids := make([]string, len(groups[k]))
		for i, d := range groups[k] {
			ids[i] = d.ID
		}
		if err := s.wakeSequencer(ctx, groups[k][0], subs); err != nil {
			errs, failed = append(errs, err), append(failed, ids...)
			continue
		}
		woken = append(woken, ids...)
	}
	return rest, woken, failed, errors.Join(errs...)
}

// wakeSequencer signals the Sequencer of d's sequence, starting it if
// needed, with its subscription's URL and policy now.
func (s *Starter) wakeSequencer(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) error {
	sub, p, err := s.deliveryPolicy(ctx, d, subs)
	if err != nil {
		return err
	}
	key := *d.OrderingKey
	// The wake goes in the trace of the request that stored d, if any.
	ctx = tracing.ContextWithParent(ctx, d.TraceParent)
	in := workflows.SequencerInput{SubscriptionID: sub.ID, OrderingKey: key, URL: sub.URL, Policy: p}
	_, err = s.Temporal.SignalWithStartWorkflow(ctx, workflows.SequencerWorkflowID(sub.ID, key), workflows.SignalNext,
		workflows.SequencerWake{URL: sub.URL, Policy: p}, workflows.SequencerStartOptions(s.Queues.OrDefault(), sub.ID, key),
		workflows.Sequencer, in)
	if err != nil {
		return fmt.Errorf("starter: wake sequencer of %s/%q: %w", sub.ID, key, err)
	}
	return nil
}
