// Package activities holds hookrelay's Temporal activities: the HTTP attempt
// and the bookkeeping around it. They are methods on one struct whose
// dependencies the worker builds; every side effect of a delivery happens here.
package activities

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Activities holds the dependencies of every activity.
type Activities struct {
	Store  *store.Store
	HTTP   *http.Client
	Logger *slog.Logger
	// BodyLimit bounds how much of a response body is kept with an attempt.
	BodyLimit int
	// StartDeliveries starts the deliveries of events the activities publish
	// (hookrelay.deadlettered) or release (a validated Event Grid
	// subscription); nil leaves them to the sweeper.
	StartDeliveries func(ctx context.Context, ds []store.Delivery) error
	// Temporal signals the endpoint workflows and releases waiting deliveries
	// (endpoint health); nil turns that off.
	Temporal client.Client
	// Queues are the task queues the endpoint workflows start on; zero means
	// workflows.DefaultQueues.
	Queues workflows.Queues
	// Signaler tells endpoint workflows what attempts mean for their health;
	// nil means the health service over Temporal (none without Temporal).
	Signaler EndpointSignaler
	// Metrics counts attempts, endings and operational events; nil counts
	// nothing.
	Metrics *metrics.Metrics
	// PublicURL is where the API is reached from outside, for the
	// validationUrl of Event Grid handshakes; empty sends none.
	PublicURL string
	// LoopbackValidationURL lets a handshake send a validationUrl on a
	// loopback address (`hookrelay dev`); otherwise such a handshake is
	// refused (ErrTypeValidationRefused).
	LoopbackValidationURL bool
	// EventGridTopic is the template of the accounts' Event Grid topics
	// (eventgrid.Topic; "" is eventgrid.DefaultTopic).
	EventGridTopic string
	// DeadLetterBlobs are the storage accounts Event Grid dead letters are
	// written to, and the delay before each write; nil writes none.
	DeadLetterBlobs *DeadLetterBlobs
	// Later writes the outcome of first-attempt successes in the
	// background; nil writes every outcome before the workflow is told.
	Later *Later
	// Shares bounds the first attempts made as local activities, per
	// endpoint and in all; nil hands none over.
	Shares *Shares
	health healthGate
}

// MaxResponseHeaderBytes bounds the response headers the HTTP client reads.
const MaxResponseHeaderBytes = 64 << 10

// New builds Activities with an HTTP client suited to webhook delivery: it
// connects only where guard allows (nil: no private network at all), through
// no proxy, follows no redirects; per-attempt timeouts come from the policy.
func New(st *store.Store, logger *slog.Logger, guard *egress.Guard) *Activities {
	if guard == nil {
		guard = egress.New(nil)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = guard.DialContext
	tr.MaxIdleConnsPerHost = 64
	// A receiver's headers are read into memory: a larger answer fails the
	// attempt instead (only HeaderBudget of them is kept anyway).
	tr.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	tr.IdleConnTimeout = 90 * time.Second
	return &Activities{
		Store: st,
		HTTP: &http.Client{
			Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		Logger:    logger,
		BodyLimit: 1024,
		Later:     NewLater(),
	}
}

// SetStatus records an in-flight delivery's status and its next attempt time.
func (a *Activities) SetStatus(ctx context.Context, in workflows.StatusInput) (workflows.StatusResult, error) {
	if in.Status == policies.StatusWaiting {
		state, err := a.Store.SetWaiting(ctx, in.DeliveryID)
		return workflows.StatusResult{EndpointState: state}, err
	}
	return workflows.StatusResult{}, a.Store.SetInFlight(ctx, in.DeliveryID, in.Status, in.NextAttemptAt)
}

// Finish records how a delivery ended, making its dead letter, or queueing it
// and deactivating its subscription (docs/policies.md#sap), and starts the
// delivery of the operational event that raised.
func (a *Activities) Finish(ctx context.Context, in workflows.FinishInput) (workflows.FinishResult, error) {
	f, err := a.Store.FinishDelivery(ctx, store.Finish{
		DeliveryID: in.DeliveryID, Status: in.Status, Reason: in.Reason,
		LastStatus: in.LastStatus, LastError: in.LastError,
		DeactivateSubscription: policies.DeactivatesSubscription(in.Status, in.OnExhausted),
	})
	if err != nil {
		return workflows.FinishResult{}, err
	}
	a.startRaised(ctx, f.Raised)
	if in.Status == policies.StatusDeadLettered {
		if err := a.afterDeadLetter(ctx, in.DeliveryID); err != nil {
			return workflows.FinishResult{}, err
		}
	}
	a.finished(ctx, in.DeliveryID, in.Status, in.Reason, f.Delivery, f.DeadLetterID)
	return workflows.FinishResult{DeadLetterID: f.DeadLetterID}, nil
}

// finished counts and logs a delivery's ending; d is the delivery as it
// ended, nil when it had ended before (nothing is counted again).
func (a *Activities) finished(ctx context.Context, id string, status policies.Status, reason string, d *store.Delivery, deadLetterID string) {
	if d != nil {
		a.Metrics.Finished(string(status), d.Policy, time.Since(d.CreatedAt), deadLetterID != "")
	}
	a.Logger.InfoContext(ctx, "delivery_finished", "delivery_id", id,
		"status", status, "reason", reason, "dead_letter_id", deadLetterID)
}

// startRaised starts the deliveries of an operational event, stored with the
// change that raised it. A failure is left to the sweeper, which starts
// every delivery left unstarted.
func (a *Activities) startRaised(ctx context.Context, r store.Raised) {
	if r.Type == "" {
		return
	}
	a.Metrics.Operational(r.Type)
	if a.StartDeliveries == nil || len(r.Deliveries) == 0 {
		return
	}
	if err := a.StartDeliveries(ctx, r.Deliveries); err != nil {
		a.Logger.WarnContext(ctx, "operational_event_start_failed", "event_type", r.Type, "error", err)
	}
}
