package starter

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// PolicyWith resolves a subscription's policy with its overrides and the IoT
// Edge defaults (docs/policies.md#eventgrid-edge): a subscription's own
// retryPolicy wins over the defaults.
func PolicyWith(sub store.Subscription, d policies.EdgeDefaults) (policies.Policy, error) {
	p, err := d.ResolveJSON(sub.Policy, sub.RetryPolicy)
	if err != nil {
		return policies.Policy{}, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	return p, nil
}

// runPolicy is the policy sub's deliveries run under: PolicyWith's, pushed
// once and queued if that fails when its account is in queue mode
// (policies.QueueMode, docs/policies.md#sap).
func runPolicy(sub store.Subscription, d policies.EdgeDefaults) (policies.Policy, error) {
	p, err := PolicyWith(sub, d)
	if err == nil && sub.AccountQueueMode {
		p = p.QueueMode()
	}
	return p, err
}

// routeEventGrid takes out of ds the deliveries that are not started one
// workflow each: those of Event Grid subscriptions still waiting for their
// validation handshake (left pending; started on validation), and those of
// output-batching subscriptions, whose Batcher is woken once per
// subscription per call (signal-with-start) and claims them itself.
func (s *Starter) routeEventGrid(ctx context.Context, ds []store.Delivery, subs map[string]store.Subscription) ([]store.Delivery, error) {
	rest := ds[:0:0]
	woken := map[string]bool{}
	var errs []error
	for _, d := range ds {
		if d.Started {
			continue
		}
		sub, err := s.subscription(ctx, d, subs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		eg := eventgrid.Of(sub.Options)
		switch {
		case eg.Awaiting():
		case eg.Batching():
			if !woken[sub.ID] {
				woken[sub.ID] = true
				errs = append(errs, s.wakeBatcher(ctx, sub))
			}
		default:
			rest = append(rest, d)
		}
	}
	return rest, errors.Join(errs...)
}

// subscription returns d's subscription, deleted or not, through the cache.
// It takes the subscription as d's publication matched it, unless it then
// awaited its Event Grid handshake: the handshake may have succeeded after
// that match and before the publication committed, when startWaiting (which
// starts the deliveries that waited) could not see d yet, so it is read
// again now that d is committed.
func (s *Starter) subscription(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) (store.Subscription, error) {
	if sub, ok := subs[d.SubscriptionID]; ok {
		return sub, nil
	}
	if d.Subscription != nil && !eventgrid.Of(d.Subscription.Options).Awaiting() {
		subs[d.SubscriptionID] = *d.Subscription
		return *d.Subscription, nil
	}
	sub, err := s.Store.SubscriptionByID(ctx, d.SubscriptionID)
	if err != nil {
		return store.Subscription{}, err
	}
	subs[d.SubscriptionID] = sub
	return sub, nil
}

// wakeBatcher signals a subscription's Batcher, starting it if needed.
func (s *Starter) wakeBatcher(ctx context.Context, sub store.Subscription) error {
	p, err := runPolicy(sub, s.Defaults)
	if err != nil {
		return err
	}
	in := workflows.BatcherInput{SubscriptionID: sub.ID, Policy: p}
	_, err = s.Temporal.SignalWithStartWorkflow(ctx, workflows.BatcherWorkflowID(sub.ID), workflows.SignalWake, p,
		workflows.BatcherStartOptions(s.Queues.OrDefault(), sub.ID), workflows.Batcher, in)
	if err != nil {
		return fmt.Errorf("starter: wake batcher of %s: %w", sub.ID, err)
	}
	return nil
}
