// Package starter starts the Delivery workflows of stored deliveries. The API
// calls it right after an event is stored; the worker's sweeper calls it for
// any delivery whose start was never recorded (a crash between the two), so
// no stored event is ever left without a workflow.
package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/workflows"
)

// Starter starts Delivery workflows.
type Starter struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
	// Defaults are the IoT Edge limits from the environment
	// (docs/policies.md#eventgrid-edge); the zero value keeps the policy's.
	Defaults policies.EdgeDefaults
	// BatchGrace is how old a batch must be before the sweeper starts its
	// Batch workflow if it has none; zero means DefaultBatchGrace.
	BatchGrace time.Duration
	// Queues are the task queues workflows start on; zero means
	// workflows.DefaultQueues.
	Queues workflows.Queues
	// Metrics counts the deliveries the sweeper starts; nil counts nothing.
	Metrics *metrics.Metrics
	// walk is where the sweeper's walk through the deliveries in flight
	// stands (reconcile).
	walk walk
}

// PolicyOf resolves a subscription's policy with its overrides.
func PolicyOf(sub store.Subscription) (policies.Policy, error) {
	var o policies.Overrides
	if len(sub.RetryPolicy) > 0 {
		if err := json.Unmarshal(sub.RetryPolicy, &o); err != nil {
			return policies.Policy{}, fmt.Errorf("subscription %s: retry_policy: %w", sub.ID, err)
		}
	}
	return policies.Resolve(sub.Policy, o)
}

// Start starts the workflow of every delivery not yet started and records
// them as started. A workflow that already exists counts as started. The
// deliveries of ordered subscriptions are handed to their sequences'
// Sequencers instead (routeOrdered).
func (s *Starter) Start(ctx context.Context, ds []store.Delivery) error {
	started, err := s.startUnmarked(ctx, ds)
	return errors.Join(err, s.Store.MarkStarted(ctx, started))
}

// startUnmarked is Start but for recording the deliveries started: it
// returns their ids for the caller to record (MarkStarted), at once or
// later (Queue). Failed starts are recorded (startFailed).
func (s *Starter) startUnmarked(ctx context.Context, ds []store.Delivery) ([]string, error) {
	subs := map[string]store.Subscription{}
	ds, egErr := s.routeEventGrid(ctx, ds, subs)
	ds, started, failed, seqErr := s.routeOrdered(ctx, ds, subs)
	errs := []error{egErr, seqErr}
	why := map[string]error{}
	for _, id := range failed {
		why[id] = seqErr
	}
	for _, d := range ds {
		if d.Started {
			continue
		}
		if err := s.startOne(ctx, d, subs); err != nil {
			errs = append(errs, err)
			failed, why[d.ID] = append(failed, d.ID), err
			continue
		}
		started = append(started, d.ID)
	}
	errs = append(errs, s.startFailed(ctx, failed, why))
	return started, errors.Join(errs...)
}

// startOne starts d's workflow. d's subscription is looked up deleted or not
// (SubscriptionByID, as routeEventGrid does): a delivery stored before its
// subscription was deleted is still started and finishes like any in flight,
// rather than failing to start on every sweep forever.
func (s *Starter) startOne(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) error {
	sub, p, err := s.deliveryPolicy(ctx, d, subs)
	if err != nil {
		return err
	}
	in := workflows.DeliveryInput{
		DeliveryID: d.ID, SubscriptionID: d.SubscriptionID, EndpointID: d.EndpointID,
		EventType: d.EventType, URL: sub.URL, Policy: p, PublishedAt: d.CreatedAt,
		Version: workflows.DeliveryVersion,
	}
	// A delivery handed over by a traced request starts in its trace.
	ctx = tracing.ContextWithParent(ctx, d.TraceParent)
	_, err = s.Temporal.ExecuteWorkflow(ctx, workflows.DeliveryStartOptions(s.Queues.OrDefault(), d.WorkflowID, in), workflows.Delivery, in)
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("starter: start %s: %w", d.WorkflowID, err)
	}
	return nil
}

// deliveryPolicy is d's subscription and its resolved policy, as a
// workflow gets it: the workflow needs the policy's rules, not its prose,
// so the description and the section it cites stay out of its input, and
// of every history.
func (s *Starter) deliveryPolicy(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) (store.Subscription, policies.Policy, error) {
	sub, err := s.subscription(ctx, d, subs)
	if err != nil {
		return sub, policies.Policy{}, err
	}
	p, err := runPolicy(sub, s.Defaults)
	p.Description, p.Section = "", ""
	return sub, p, err
}

// Sweep runs, every interval until ctx ends, one sweep (SweepOnce) of the
// deliveries older than grace.
func (s *Starter) Sweep(ctx context.Context, interval, grace time.Duration) {
	Every(ctx, interval, func(ctx context.Context) {
		if err := s.SweepOnce(ctx, grace); err != nil && ctx.Err() == nil {
			s.Logger.ErrorContext(ctx, "sweep_failed", "error", err)
		}
	})
}
