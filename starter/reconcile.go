package starter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Reconciling deliveries with their workflows
// (docs/operations.md#acting-from-the-temporal-web-ui).
const (
	// reconcileLimit bounds the deliveries one sweep looks at: with a sweep
	// every 10 s, each of up to 1,200 deliveries in flight is looked at
	// once a minute.
	reconcileLimit = 200
	// reconcileTimeout bounds one sweep's reconciliation.
	reconcileTimeout = 30 * time.Second
)

// Final reasons of the deliveries the sweeper ends.
const (
	ReasonTerminated  = "terminated in Temporal"
	ReasonCancelled   = "cancelled in Temporal: its workflow closed as Canceled"
	ReasonTimedOut    = "its workflow timed out in Temporal"
	ReasonFailed      = "its workflow failed in Temporal"
	ReasonStartFailed = "its workflow could not be started"
)

// walk is where the walk through the deliveries in flight stands.
type walk struct {
	mu     sync.Mutex
	cursor store.InFlightCursor
}

// next returns the cursor to read from, and moves it past ds, back to the
// start after a short read (the end).
func (w *walk) next(read func(store.InFlightCursor) ([]store.InFlight, error)) ([]store.InFlight, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ds, err := read(w.cursor)
	switch {
	case err != nil:
	case len(ds) < reconcileLimit:
		w.cursor = store.InFlightCursor{}
	default:
		last := ds[len(ds)-1]
		w.cursor = store.InFlightCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return ds, err
}

// Reconcile looks at the workflows of the next deliveries in flight that
// are unchanged for longer than age (up to reconcileLimit, walking through
// all of them over successive calls): a delivery whose workflow was
// terminated, cancelled, timed out or failed ends dead-lettered with a
// reason naming it (who terminated it and why, where Temporal says); one
// whose workflow is gone (deleted, past the namespace's retention, lost
// with the server's state) has it started again under its id. A delivery
// of an ordered subscription not started yet has its Sequencer woken if
// that is not running. A delivery of an Event Grid batch is reconciled with
// the batch's workflow. Each workflow is described.
func (s *Starter) Reconcile(ctx context.Context, age time.Duration) error {
	return s.reconcile(ctx, age, false)
}

// reconcile is Reconcile. Listed (the sweeper's way), it first asks
// Temporal's visibility for the workflows' statuses, a query per 100, and
// describes only those it shows closed other than completed, or does not
// show: a sweep's 200 describes, nearly all of running workflows, took
// about a third of a core on the production-shaped cluster while 10,000
// deliveries waited on retry timers, and slowed every other endpoint's
// deliveries (issue 51). Visibility runs a little behind: a workflow
// closed a moment ago is found in a later sweep.
func (s *Starter) reconcile(ctx context.Context, age time.Duration, listed bool) error {
	ds, err := s.walk.next(func(c store.InFlightCursor) ([]store.InFlight, error) {
		return s.Store.InFlightDeliveries(ctx, c, age, reconcileLimit)
	})
	errs := []error{err}
	subs := map[string]store.Subscription{}
	ctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()
	settled := func(store.InFlight) bool { return false }
	if listed && len(ds) > 0 {
		settled = s.settled(ctx, ds)
	}
	for _, d := range ds {
		if settled(d) {
			continue
		}
		err := s.reconcileOne(ctx, d, subs)
		errs = append(errs, err)
		if errors.Is(err, errUnreachable) {
			break // Temporal is down or slow: the next sweep goes on
		}
	}
	return errors.Join(errs...)
}

// settled tells the deliveries whose workflow visibility shows running or
// completed: nothing to reconcile (SettleOpen records a success). When
// visibility cannot be asked (a Temporal without SQL or Elasticsearch
// visibility), it says so once a sweep and tells none: each is described.
func (s *Starter) settled(ctx context.Context, ds []store.InFlight) func(store.InFlight) bool {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = workflowOf(d)
	}
	seen, err := s.visible(ctx, ids)
	if err != nil {
		s.Logger.WarnContext(ctx, "reconcile_list_failed", "error", err)
	}
	return func(d store.InFlight) bool {
		st := seen[workflowOf(d)].status // zero (unspecified) when not shown
		return st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || st == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}
}

// workflowOf is the workflow that runs a delivery in flight: its own, or
// its Event Grid batch's.
func workflowOf(d store.InFlight) string {
	if d.BatchID != "" {
		return workflows.BatchWorkflowID(d.BatchID)
	}
	return d.WorkflowID
}

// errUnreachable marks a failure to describe a workflow: Temporal may be
// unreachable, and the sweep stops reconciling rather than wait on each.
var errUnreachable = errors.New("describe failed")

// reconcileOne reconciles one delivery in flight with its workflow, or
// its batch's: a batch whose workflow is gone is recoverBatches' concern.
func (s *Starter) reconcileOne(ctx context.Context, d store.InFlight, subs map[string]store.Subscription) error {
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, workflowOf(d), "")
	var gone *serviceerror.NotFound
	switch {
	case errors.As(err, &gone) && d.BatchID != "":
		return nil
	case errors.As(err, &gone) && d.Seq != nil:
		return s.wakeIdleSequencer(ctx, d.Delivery, subs)
	case errors.As(err, &gone):
		return s.restart(ctx, d.Delivery, subs)
	case err != nil:
		return fmt.Errorf("starter: reconcile %s: %w: %w", d.ID, errUnreachable, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	outcome, reason := closedReason(info.GetStatus())
	if outcome == "" {
		return nil // running, or completed (SettleOpen records a success)
	}
	if outcome == "terminated" {
		reason = s.terminatedReason(ctx, info)
	}
	return s.end(ctx, d.ID, outcome, reason)
}

// closedReason is what a workflow closed with status means for its
// delivery: the outcome counted and the final reason; "" while it runs or
// when it completed.
func closedReason(status enumspb.WorkflowExecutionStatus) (outcome, reason string) {
	switch status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated", ReasonTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled", ReasonCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out", ReasonTimedOut
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed", ReasonFailed
	}
	return "", ""
}

// terminatedReason names who terminated the workflow and why, as its
// closing event says: "terminated in Temporal by <identity>: <reason>".
func (s *Starter) terminatedReason(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) string {
	ex := info.GetExecution()
	it := s.Temporal.GetWorkflowHistory(ctx, ex.GetWorkflowId(), ex.GetRunId(), false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	var attrs *historypb.WorkflowExecutionTerminatedEventAttributes
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			break
		}
		if a := ev.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			attrs = a
		}
	}
	reason := ReasonTerminated
	if who := attrs.GetIdentity(); who != "" {
		reason += " by " + who
	}
	if why := attrs.GetReason(); why != "" {
		reason += ": " + why
	}
	return reason
}

// end ends a delivery whose workflow will not: dead-lettered (redrivable)
// with reason, counted, logged and raised as any ending is.
func (s *Starter) end(ctx context.Context, id, outcome, reason string) error {
	fin := store.Finish{DeliveryID: id, Status: policies.StatusDeadLettered, Reason: reason}
	as, err := s.Store.Attempts(ctx, id)
	if err != nil {
		return err
	}
	if len(as) > 0 { // the dead letter says how the last request went, as a workflow's would
		fin.LastStatus, fin.LastError = as[len(as)-1].StatusCode, as[len(as)-1].ErrorMessage
	}
	f, err := s.Store.FinishDelivery(ctx, fin)
	if err != nil || f.Delivery == nil {
		return err // nil Delivery: it ended meanwhile
	}
	s.Metrics.Reconciled(outcome)
	s.Metrics.Finished(string(policies.StatusDeadLettered), f.Delivery.Policy, time.Since(f.Delivery.CreatedAt), f.DeadLetterID != "")
	s.Logger.WarnContext(ctx, "sweeper_ended_delivery", "delivery_id", id, "outcome", outcome, "reason", reason,
		"dead_letter_id", f.DeadLetterID)
	if f.Raised.Type == "" {
		return nil
	}
	s.Metrics.Operational(f.Raised.Type)
	return s.Start(ctx, f.Raised.Deliveries)
}

// restart starts again, under its id, the workflow of a delivery in flight
// that Temporal no longer has: it goes on under its policy from a first
// attempt, its time-to-live counted from its publication, its attempts
// numbered after those it made (store.BeginTarget).
func (s *Starter) restart(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) error {
	if err := s.startOne(ctx, d, subs); err != nil {
		return err
	}
	s.Metrics.Reconciled("restarted")
	s.Logger.WarnContext(ctx, "sweeper_restarted_delivery", "delivery_id", d.ID, "workflow_id", d.WorkflowID)
	return nil
}

// wakeIdleSequencer wakes the Sequencer of an ordered delivery whose own
// workflow is not started yet, when that Sequencer is not running (it was
// terminated, cancelled or deleted): the sequence goes on.
func (s *Starter) wakeIdleSequencer(ctx context.Context, d store.Delivery, subs map[string]store.Subscription) error {
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, workflows.SequencerWorkflowID(d.SubscriptionID, *d.OrderingKey), "")
	var gone *serviceerror.NotFound
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("starter: reconcile %s: %w", d.ID, err)
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	return s.wakeSequencer(ctx, d, subs)
}

// startFailed records the deliveries whose workflows could not be started
// (why: each one's error), and ends, dead-lettered with the start's error
// as its reason, those whose start failed store.MaxStartAttempts times.
func (s *Starter) startFailed(ctx context.Context, failed []string, why map[string]error) error {
	exhausted, err := s.Store.StartFailed(ctx, failed)
	errs := []error{err}
	for _, id := range exhausted {
		reason := fmt.Sprintf("%s (%d tries): %v", ReasonStartFailed, store.MaxStartAttempts, why[id])
		errs = append(errs, s.end(ctx, id, "start_failed", reason))
	}
	return errors.Join(errs...)
}
