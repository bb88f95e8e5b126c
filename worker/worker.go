// Package worker runs hookrelay's Temporal workers: the workflows and their
// bookkeeping on one task queue, first attempts and retries on two more, and
// the sweeper that starts any stored delivery whose workflow was never started.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/workflows"
)

// Options tune the workers.
type Options struct {
	// HTTPConcurrency bounds the attempts in flight on each delivery queue.
	HTTPConcurrency int
	// FirstAttemptsPerEndpoint bounds one endpoint's first attempts made
	// at once as local activities in this process; the first attempts of
	// all endpoints together are bounded by half of HTTPConcurrency
	// (activities.Shares). Zero means activities.DefaultLocalPerEndpoint.
	FirstAttemptsPerEndpoint int
	// Shares are the bounds of the local first attempts, which the API's
	// start queue also asks which endpoints are in trouble
	// (starter.Queue.Troubled); nil: those NewShares gives.
	Shares *activities.Shares
	// RetriesPerSecond bounds the retries all workers together start per
	// second: Temporal's rate limit on the retries task queue, which each
	// worker sets when it polls (the SDK's TaskQueueActivitiesPerSecond);
	// the others wait on the queue, where Temporal's fairness serves the
	// endpoints in turn. Zero means no bound.
	RetriesPerSecond int
	// SweepInterval is how often unstarted deliveries are looked for; zero
	// turns the sweeper off, and the hourly pruning (Prune).
	SweepInterval time.Duration
	// EdgeDefaults are the IoT Edge limits from the environment
	// (docs/policies.md#eventgrid-edge).
	EdgeDefaults policies.EdgeDefaults
	// QueuePrefix names the task queues (workflows.QueuesFor); empty means
	// workflows.DefaultQueuePrefix. Tests give each test its own.
	QueuePrefix string
	// Egress decides where attempts may connect; nil denies every private
	// and special-purpose network (egress.New(nil)).
	Egress *egress.Guard
	// Metrics counts attempts, endings, operational events and sweeper
	// starts; nil counts nothing.
	Metrics *metrics.Metrics
	// PublicURL is the API's address from outside (HOOKRELAY_PUBLIC_URL),
	// for Event Grid's validationUrl.
	PublicURL string
	// LoopbackValidationURL lets Event Grid handshakes send a validationUrl
	// on a loopback address (`hookrelay dev`; production refuses them).
	LoopbackValidationURL bool
	// EventGridTopic is the template of the accounts' Event Grid topics
	// (HOOKRELAY_EVENTGRID_TOPIC; "" is eventgrid.DefaultTopic).
	EventGridTopic string
	// Retention is how long deliveries that ended, their attempts and
	// their events are kept (HOOKRELAY_RETENTION); zero keeps them forever.
	Retention time.Duration
	// DeadLetterRetention is how long dead letters are kept
	// (HOOKRELAY_DEAD_LETTER_RETENTION); zero keeps them forever.
	DeadLetterRetention time.Duration
	// MainQueueOnly runs the worker of the workflows' task queue alone
	// (workflow tasks and the local activities they run: first attempts
	// and bookkeeping), as `hookrelay api` does so that the deliveries it
	// starts start eagerly in its own process; retries and the rest stay
	// with `hookrelay worker`.
	MainQueueOnly bool
	// Tracing, when set, sends each attempt's trace context to its receiver
	// (activities.TracedTransport); the Temporal client c traces the
	// workflows and activities themselves (tracing.Tracing.ClientInterceptors).
	Tracing *tracing.Tracing
	// DeadLetterBlobs are the Azure storage accounts Event Grid dead
	// letters are written to, and the delay before each write; nil writes
	// none (the DeadLetterBlob workflows started then retry, and give up).
	DeadLetterBlobs *activities.DeadLetterBlobs
}

// NewShares are the bounds of the local first attempts these options give.
func (o Options) NewShares() *activities.Shares {
	per := o.FirstAttemptsPerEndpoint
	if per <= 0 {
		per = activities.DefaultLocalPerEndpoint
	}
	total := 0 // the SDK's own local-activity slots: no bound
	if o.HTTPConcurrency > 0 {
		total = max(1, o.HTTPConcurrency*activities.DefaultLocalShare/100)
	}
	return activities.NewShares(per, total)
}

// Queues are the task queues the options name.
func (o Options) Queues() workflows.Queues { return workflows.QueuesFor(o.QueuePrefix).OrDefault() }

// DefaultOptions are the options `hookrelay worker` runs with.
func DefaultOptions() Options {
	return Options{HTTPConcurrency: 200, SweepInterval: 10 * time.Second}
}

// Register puts every workflow and activity on the workers that serve them.
func Register(main, deliveries, retries sdkworker.Registry, acts *activities.Activities) {
	main.RegisterWorkflowWithOptions(workflows.Delivery, workflow.RegisterOptions{Name: "Delivery"})
	main.RegisterWorkflowWithOptions(workflows.Endpoint, workflow.RegisterOptions{Name: workflows.EndpointWorkflowType})
	main.RegisterWorkflowWithOptions(workflows.Sequencer, workflow.RegisterOptions{Name: "Sequencer"})
	main.RegisterActivity(acts)
	deliver := activity.RegisterOptions{Name: workflows.ActivityDeliver}
	deliveries.RegisterActivityWithOptions(acts.Deliver, deliver)
	retries.RegisterActivityWithOptions(acts.Deliver, deliver)
	registerEventGrid(main, deliveries, retries, acts)
}

// queueNames names the first n of the task queues q, main first.
func queueNames(q workflows.Queues, n int) []string {
	return []string{q.Main, q.Deliveries, q.Retries}[:n]
}

// Run serves the task queues until ctx ends.
func Run(ctx context.Context, c client.Client, st *store.Store, logger *slog.Logger, opts Options) error {
	stop, err := Start(ctx, c, st, logger, opts)
	if err != nil {
		return err
	}
	<-ctx.Done()
	logger.Info("worker_stopping")
	stop()
	return nil
}

// Start starts the workers on the task queues of opts and, when
// opts.SweepInterval is set, the sweeper (until ctx ends); stop stops the
// workers.
func Start(ctx context.Context, c client.Client, st *store.Store, logger *slog.Logger, opts Options) (stop func(), err error) {
	acts := activities.New(st, logger, opts.Egress)
	q := opts.Queues()
	acts.Temporal, acts.Queues, acts.Metrics, acts.PublicURL = c, q, opts.Metrics, opts.PublicURL
	acts.EventGridTopic, acts.DeadLetterBlobs = opts.EventGridTopic, opts.DeadLetterBlobs
	acts.LoopbackValidationURL = opts.LoopbackValidationURL
	acts.Shares = opts.Shares
	if acts.Shares == nil {
		acts.Shares = opts.NewShares()
	}
	if opts.Tracing != nil {
		acts.HTTP.Transport = activities.TracedTransport(acts.HTTP.Transport)
	}
	// First attempts run as local activities in this worker (workflows/delivery_local.go).
	main := sdkworker.New(c, q.Main, sdkworker.Options{MaxConcurrentLocalActivityExecutionSize: opts.HTTPConcurrency})
	httpOpts := sdkworker.Options{
		MaxConcurrentActivityExecutionSize: opts.HTTPConcurrency,
		DisableWorkflowWorker:              true,
	}
	deliveries := sdkworker.New(c, q.Deliveries, httpOpts)
	retriesOpts := httpOpts // and the retry budget (docs/endpoints.md#isolation)
	retriesOpts.TaskQueueActivitiesPerSecond = float64(opts.RetriesPerSecond)
	retries := sdkworker.New(c, q.Retries, retriesOpts)
	Register(main, deliveries, retries, acts)
	ws := []sdkworker.Worker{main, deliveries, retries}
	if opts.MainQueueOnly {
		ws = ws[:1]
	}
	stop = func() {
		for _, w := range ws {
			w.Stop()
		}
		// The outcomes of the last successes are written before the
		// process goes: none is left to the sweeper on a clean stop; so
		// are the rows of first attempts handed over and not made.
		acts.Later.Wait()
		dropRows(context.Background(), logger, "handed_over_attempts_not_dropped", st.DropHandedOver)
	}
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, started := range ws[:i] {
				started.Stop()
			}
			return nil, fmt.Errorf("worker: start: %w", err)
		}
	}
	logger.InfoContext(ctx, "worker_started", "task_queues", queueNames(q, len(ws)))
	s := &starter.Starter{Store: st, Temporal: c, Logger: logger, Defaults: opts.EdgeDefaults, Queues: q, Metrics: opts.Metrics}
	acts.StartDeliveries = s.Start
	go starter.Every(ctx, time.Second, func(ctx context.Context) {
		dropRows(ctx, logger, "unsent_attempts_not_dropped", st.DropUnsent)
	})
	if opts.SweepInterval > 0 {
		go s.Sweep(ctx, opts.SweepInterval, starter.SweepGrace)
		go prune(ctx, st, logger, opts)
		go reportBacklog(ctx, st, logger)
	}
	return stop, nil
}

// dropRows runs drop, one of the store's deletes of attempts rows no
// request went out for (store.DropUnsent, store.DropHandedOver), for a few
// seconds at most, and logs msg if it fails.
func dropRows(ctx context.Context, logger *slog.Logger, msg string, drop func(context.Context) error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := drop(ctx); err != nil {
		logger.WarnContext(ctx, msg, "error", err)
	}
}
