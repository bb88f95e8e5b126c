package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// Signals a waiting Delivery understands: the endpoint was re-enabled, or the
// endpoint workflow chose this delivery as its probe.
const (
	SignalRelease = "release"
	SignalProbe   = "probe"
)

// DeliveryInput is the input of the Delivery workflow. The event itself stays
// in PostgreSQL; the workflow carries ids and its resolved policy.
type DeliveryInput struct {
	DeliveryID     string
	SubscriptionID string
	EndpointID     string
	EventType      string
	URL            string
	Policy         policies.Policy
	// PublishedAt is when the delivery was stored (at publication, or at a
	// redrive or redeliver): the time-to-live counts from it (docs/policies.md#eventgrid),
	// however late the workflow started (after a crash, or a
	// validation handshake). Zero: from the workflow's start.
	PublishedAt time.Time
	// Version is the version of the workflow's code the delivery was
	// started with (DeliveryVersion); zero for deliveries started before
	// it was carried here, which ask workflow.GetVersion instead.
	Version int
	// First is the first attempt of an ordered delivery, made by its
	// Sequencer before it started this workflow (sequencer_attempt.go):
	// the workflow goes on from its result. PublishedAt is then when that
	// attempt's request went out, its turn (zero when it made none). Nil:
	// the workflow makes it.
	First *FirstAttempt `json:",omitempty"`
}

// DeliveryResult is how a Delivery ended.
type DeliveryResult struct {
	Status       policies.Status
	Attempts     int
	Reason       string `json:",omitzero"`
	DeadLetterID string `json:",omitzero"`
	// StatusCode and DurationMs are the last attempt's, when it recorded
	// the delivery as delivered itself (DeliverResult.Finished): what the
	// sweeper records if the worker stopped before it did
	// (starter.SettleOpen).
	StatusCode int     `json:",omitzero"`
	DurationMs float64 `json:",omitzero"`
}

// Delivery delivers one event to one subscription under its policy: one
// activity execution per attempt, durable timers between attempts, until it is
// delivered, dead-lettered, dropped or queued.
func Delivery(ctx workflow.Context, in DeliveryInput) (DeliveryResult, error) {
	d := &delivery{retries: retries{ctx: ctx, policy: in.Policy, seed: policies.Seed(in.DeliveryID)}, in: in}
	v := workflow.Version(in.Version)
	if v < versionInInput {
		v = workflow.GetVersion(ctx, changeLocalBookkeeping, workflow.DefaultVersion, versionFinishInAttempt)
	}
	d.localBookkeeping = v >= 1
	d.localFirstAttempt = v >= versionLocalFirstAttempt
	d.finishInAttempt = v >= versionFinishInAttempt
	d.quietSuccess = v >= versionInInput
	d.quietStart = v >= versionQuietStart
	d.internalGrace = v >= versionInternalGrace
	d.fairShares = v >= versionFairShares
	if d.fairShares {
		d.late = workflow.GetSignalChannel(ctx, SignalLateAnswer)
	}
	d.pr.FromPublication = v >= versionFromPublication
	d.cancellable = v >= versionCancel
	res, err := d.run(d, in.PublishedAt)
	if d.cancellable && err != nil && ctx.Err() != nil {
		return d.cancelled(ctx)
	}
	return res, err
}

// changeLocalBookkeeping marks the changes that made a delivery cheaper for
// Temporal; deliveries started before each replay as they ran. Version 1
// moved SetStatus and Finish to local activities; versionLocalFirstAttempt
// (issue 12) makes the first attempt a local activity too (localAttempt);
// versionFinishInAttempt lets that attempt record its own success.
const changeLocalBookkeeping = "local-bookkeeping"

// Versions of changeLocalBookkeeping: from versionLocalFirstAttempt the
// first attempt runs as a local activity; from versionFinishInAttempt a
// successful first attempt also records the delivery as delivered, so the
// workflow runs no Finish after it (finish). From versionInInput (issue 22)
// the version comes with the input (DeliveryInput.Version) and the workflow
// does not call GetVersion: that call costs every new delivery a marker and
// an upsert of TemporalChangeVersion, two of its nine history events. The
// version is fixed when the delivery starts, so replay sees the same one; a
// later change of the workflow's commands raises DeliveryVersion and tests
// d.version as it would test GetVersion's answer.
//
// From versionQuietStart a delivery starts with no search attribute and no
// memo (DeliveryStartOptions): its identity (EndpointId, SubscriptionId,
// EventType, Policy) is upserted with its first DeliveryStatus, when it
// leaves the common path. The start's search attributes cost the server a
// sixth of its work per delivery (measured in BENCHMARKS.md); a delivery
// delivered by its first attempt is found by its workflow id or in the API.
const (
	versionLocalFirstAttempt = 2
	versionFinishInAttempt   = 3
	versionInInput           = 4
	versionQuietStart        = 5
	// versionInternalGrace (issue 22, with versionQuietStart): failures of
	// hookrelay itself get at least policies.InternalGrace before a count-bounded
	// policy's deadline ends the delivery (retries.internalDeadline).
	versionInternalGrace = 5
	// versionFairShares (issue 51): a local first attempt may be handed
	// over (DeliverResult.HandedOver) when its endpoint's share of local
	// first attempts is used up, and is then made as a regular activity on
	// the deliveries queue (docs/endpoints.md#isolation); a late answer
	// (SignalLateAnswer) ends the delivery as delivered.
	versionFairShares = 6
	// versionFromPublication (issue 53): the retry window of a policy
	// without a time-to-live counts from publication, and bounds every
	// retry of an offset schedule; a retry Retry-After moved later moves the
	// later slots of an offset schedule with it (policies.Progress.FromPublication).
	versionFromPublication = 7
	// versionCancel (issue 52): a delivery whose workflow is cancelled (the
	// Web UI's Cancel, `temporal workflow cancel`) ends at once, dead-lettered
	// with ReasonCancelled (cancelled), instead of closing as Canceled with
	// its row still in flight; a wait for the endpoint ends with the
	// cancellation too (awaitEndpoint).
	versionCancel = 8
)

// DeliveryVersion is the version of the Delivery workflow's code that
// deliveries start with now; the starter puts it in DeliveryInput.Version.
const DeliveryVersion = versionCancel

type delivery struct {
	retries
	in DeliveryInput
	// localBookkeeping is false only for deliveries started before
	// changeLocalBookkeeping.
	localBookkeeping bool
	// localFirstAttempt is true from versionLocalFirstAttempt on; firstDone
	// once that local attempt was made.
	localFirstAttempt, firstDone bool
	// finishInAttempt is true from versionFinishInAttempt on.
	finishInAttempt bool
	// quietSuccess is true from versionInInput on: the delivery starts
	// without DeliveryStatus (DeliveryStartOptions), and one delivered
	// with no status recorded before (upserted false: its first attempt
	// succeeded) closes without one too.
	quietSuccess, upserted bool
	// quietStart is true from versionQuietStart on: the delivery started
	// with no search attributes, and its first upsert sets its identity.
	quietStart bool
	// fairShares is true from versionFairShares on.
	fairShares bool
	// cancellable is true from versionCancel on.
	cancellable bool
}

// attempt runs the Deliver activity once: the first attempt as a local
// activity (localAttempt; on the deliveries queue for older deliveries),
// retries on the retries queue, never retried by Temporal itself.
func (d *delivery) attempt(scheduled time.Time, probe bool) (DeliverResult, error) {
	ctx := attemptOptions(d.ctx, d.pr.Attempts, d.in.Policy.Timeout)
	in := DeliverInput{
		DeliveryID: d.in.DeliveryID, Attempt: d.pr.Attempts, ScheduledAt: scheduled,
		Timeout: d.in.Policy.Timeout, Probe: probe, Success: d.in.Policy.SuccessCodes,
		Health: d.in.Policy.Health, MayThrottle: true,
	}
	if d.fairShares {
		in.LateAnswer = d.in.Policy.LateAnswer
	}
	var res DeliverResult
	if first, ok := d.sequencedFirst(); ok {
		return first.Result, first.err()
	}
	fut := d.localAttempt(in)
	if fut == nil {
		fut = workflow.ExecuteActivity(ctx, ActivityDeliver, in)
	}
	err := fut.Get(ctx, &res)
	if err == nil && res.HandedOver {
		// The endpoint's share of local first attempts was used up:
		// the same first attempt, as a regular activity.
		in.FinishDelivered = d.finishInAttempt
		err = workflow.ExecuteActivity(ctx, ActivityDeliver, in).Get(ctx, &res)
	}
	if err != nil {
		// hookrelay itself failed (a crashed worker, an unreachable
		// database), not the endpoint: see backOffInternal.
		workflow.GetLogger(d.ctx).Warn("attempt_failed_internally", "error", err)
		return res, err
	}
	return res, nil
}

// attemptOptions are the options of one HTTP attempt: the first on the
// deliveries queue, retries on the retries queue, bounded by the policy's
// timeout, never retried by Temporal itself (each attempt is one execution).
func attemptOptions(ctx workflow.Context, attempts int, timeout time.Duration) workflow.Context {
	q := queuesOf(ctx)
	queue := q.Deliveries
	if attempts > 0 {
		queue = q.Retries
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: attemptTimeout(timeout),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// attemptTimeout bounds one attempt's execution: the policy's timeout for the
// request, and 15 s for recording it.
func attemptTimeout(policyTimeout time.Duration) time.Duration { return policyTimeout + 15*time.Second }

// bookkeep runs one idempotent bookkeeping activity, which Temporal retries
// until it succeeds. It runs as a local activity, in the workflow's own worker:
// a delivery that succeeds at once then costs the server about what a
// workflow with one activity does.
func (d *delivery) bookkeep(name string, in, out any) error {
	retry := &temporal.RetryPolicy{MaximumInterval: time.Minute}
	if !d.localBookkeeping {
		ctx := workflow.WithActivityOptions(d.ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
		return workflow.ExecuteActivity(ctx, name, in).Get(ctx, out)
	}
	ctx := workflow.WithLocalActivityOptions(d.ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
	return workflow.ExecuteLocalActivity(ctx, name, in).Get(ctx, out)
}

// setStatus records an in-flight status; for "waiting" it returns the
// endpoint's state as recorded with it.
func (d *delivery) setStatus(status policies.Status, next *time.Time) string {
	d.upsert(status)
	in := StatusInput{DeliveryID: d.in.DeliveryID, Status: status, NextAttemptAt: next}
	var res StatusResult
	if err := d.bookkeep(ActivitySetStatus, in, &res); err != nil {
		workflow.GetLogger(d.ctx).Error("set_status_failed", "error", err)
	}
	return res.EndpointState
}

// upsert sets the search attributes DeliveryStatus and Attempts, with the
// delivery's identity the first time for one started quietly.
func (d *delivery) upsert(status policies.Status) {
	attrs := []temporal.SearchAttributeUpdate{
		AttrDeliveryStatus.ValueSet(string(status)), AttrAttempts.ValueSet(int64(d.pr.Attempts))}
	if d.quietStart && !d.upserted {
		attrs = append(attrs, identityAttributes(d.in)...)
	}
	d.upserted = true
	if err := workflow.UpsertTypedSearchAttributes(d.ctx, attrs...); err != nil {
		workflow.GetLogger(d.ctx).Error("upsert_search_attributes_failed", "error", err)
	}
}

// finish records how the delivery ended: its search attributes (but for a
// quiet success) and, unless its attempt did, its status in PostgreSQL.
func (d *delivery) finish(status policies.Status, reason string) (DeliveryResult, error) {
	if !d.quietSuccess || d.upserted || status != policies.StatusDelivered {
		d.upsert(status)
	}
	if status == policies.StatusDelivered && d.last.Finished {
		// The attempt recorded it, or is recording it.
		return DeliveryResult{Status: status, Attempts: d.pr.Attempts,
			StatusCode: d.last.StatusCode, DurationMs: d.last.DurationMs}, nil
	}
	in := FinishInput{
		DeliveryID: d.in.DeliveryID, Status: status, Reason: reason,
		LastStatus: d.last.StatusCode, LastError: d.last.Error, OnExhausted: d.in.Policy.OnExhausted,
	}
	var res FinishResult
	if err := d.bookkeep(ActivityFinish, in, &res); err != nil {
		return DeliveryResult{}, err
	}
	return DeliveryResult{Status: status, Attempts: d.pr.Attempts, Reason: reason, DeadLetterID: res.DeadLetterID}, nil
}
