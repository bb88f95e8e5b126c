package workflows_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// Issue 52: what operators do to a delivery's workflow from the Temporal Web
// UI or the `temporal` CLI, and what the API then shows
// (docs/operations.md#acting-from-the-temporal-web-ui).

// slowRetry is a custom policy whose retry comes 5 minutes after a failure:
// a delivery that failed once sits retrying for the rest of the test.
const slowRetry = `{"custom": {"kind": "fixed", "interval_seconds": 300}}`

// awaitStatus waits (at most a minute) until f's delivery has status.
func awaitStatus(t *testing.T, f *fixture, status policies.Status) store.Delivery {
	t.Helper()
	for i := 0; ; i++ {
		d := f.reload(t)
		if d.Status == status {
			return d
		}
		if i == 600 {
			t.Fatalf("%s is %s, never %s", d.ID, d.Status, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// retryingFixture starts a delivery under slowRetry whose receiver fails
// its first request (then succeeds) and waits until it is retrying.
func retryingFixture(t *testing.T, c client.Client, st *store.Store) (*fixture, *starter.Starter) {
	t.Helper()
	s := startWorkers(t, c, st)
	f := newFixtureOn(t, st, policies.NameCustom, slowRetry, failFirst(1, http.StatusServiceUnavailable))
	startDelivery(t, c, s, f)
	awaitStatus(t, f, policies.StatusRetrying)
	return f, s
}

// checkEndedRedrivable checks that f's delivery ended dead-lettered with a
// reason that has want in it and no next attempt, and that it can be redriven.
func checkEndedRedrivable(t *testing.T, f *fixture, want string) {
	t.Helper()
	d := f.reload(t)
	if d.Status != policies.StatusDeadLettered || !strings.Contains(d.FinalReason, want) || d.NextAttemptAt != nil {
		t.Fatalf("delivery %s %q next_attempt_at %v, want dead_lettered naming %q, no next attempt",
			d.Status, d.FinalReason, d.NextAttemptAt, want)
	}
	if _, err := f.st.DeadLetterOf(context.Background(), d.ID); err != nil {
		t.Fatalf("dead letter: %v", err)
	}
	if _, err := f.st.FollowUp(context.Background(), d, true); err != nil {
		t.Fatalf("redrive: %v", err)
	}
}

// TestCancelEndsDelivery: `temporal workflow cancel` (the Web UI's Cancel)
// on a retrying delivery ends it at once, dead-lettered with the
// cancellation as its reason; its workflow closes as Canceled.
func TestCancelEndsDelivery(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	f, _ := retryingFixture(t, c, st)
	ctx := context.Background()
	if err := c.CancelWorkflow(ctx, f.delivery.WorkflowID, ""); err != nil {
		t.Fatal(err)
	}
	err := c.GetWorkflow(ctx, f.delivery.WorkflowID, "").Get(ctx, nil)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("workflow ended with %v, want canceled", err)
	}
	checkEndedRedrivable(t, f, workflows.ReasonCancelled)
}

// TestTerminateReconciled: `temporal workflow terminate` on a retrying
// delivery: the sweeper's reconciliation ends it dead-lettered, naming the
// termination, who made it and why.
func TestTerminateReconciled(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	f, s := retryingFixture(t, c, st)
	ctx := context.Background()
	if err := c.TerminateWorkflow(ctx, f.delivery.WorkflowID, "", "receiver retired"); err != nil {
		t.Fatal(err)
	}
	s.Metrics = metrics.New()
	if err := s.Reconcile(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if r := f.reload(t).FinalReason; !strings.HasSuffix(r, ": receiver retired") {
		t.Errorf("reason %q does not say why", r)
	}
	checkEndedRedrivable(t, f, starter.ReasonTerminated+" by ")
	if l, err := st.DeadLetterOf(ctx, f.delivery.ID); err != nil || l.LastStatusCode != http.StatusServiceUnavailable {
		t.Errorf("dead letter's last status %d (%v), want the last attempt's 503", l.LastStatusCode, err)
	}
	var raised int
	if err := st.DB().Get(&raised, `SELECT count(*) FROM events WHERE type = $1 AND subject LIKE '%' || $2`,
		store.EventDeliveryDeadLettered, f.delivery.ID); err != nil || raised != 1 {
		t.Errorf("%d operational events (%v), want 1", raised, err)
	}
	if got := counted(t, s.Metrics, "hookrelay_reconciled_deliveries_total", "terminated"); got != 1 {
		t.Errorf("hookrelay_reconciled_deliveries_total{outcome=terminated} = %v, want 1", got)
	}
}

// counted is the value of the counter name with the label value label in m.
func counted(t *testing.T, m *metrics.Metrics, name, label string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			if f.GetName() == name && len(mt.GetLabel()) == 1 && mt.GetLabel()[0].GetValue() == label {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestDeleteReconciled: `temporal workflow delete` on a retrying delivery:
// the sweeper starts its workflow again under its id, which delivers it;
// the attempts stay numbered in order (0 failed, 1 delivered).
func TestDeleteReconciled(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	f, s := retryingFixture(t, c, st)
	ctx := context.Background()
	_, err := c.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: testenv.TemporalServer(t).Namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: f.delivery.WorkflowID}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // deletion is asynchronous
		_, err := c.DescribeWorkflowExecution(ctx, f.delivery.WorkflowID, "")
		var gone *serviceerror.NotFound
		if errors.As(err, &gone) {
			break
		}
		if i == 600 {
			t.Fatalf("workflow never deleted: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.Reconcile(ctx, 0); err != nil {
		t.Fatal(err)
	}
	awaitDelivery(t, c, f, time.Minute)
	checkNumbered(t, f, policies.StatusDelivered, 2)
}

// checkNumbered checks that f's delivery ended with status after n attempts
// numbered 0 … n-1, the last one a success.
func checkNumbered(t *testing.T, f *fixture, status policies.Status, n int) {
	t.Helper()
	d, as := f.reload(t), f.attempts(t)
	if d.Status != status || d.Attempts != n || len(as) != n {
		t.Fatalf("delivery %s after %d attempts (%d rows), want %s after %d", d.Status, d.Attempts, len(as), status, n)
	}
	for i, a := range as {
		if a.Attempt != i || a.Try != 0 {
			t.Errorf("attempt row %d numbered %d try %d", i, a.Attempt, a.Try)
		}
	}
	if !as[n-1].Success {
		t.Errorf("last attempt %+v, want a success", as[n-1])
	}
}

// TestResetToFirstWorkflowTask: `temporal workflow reset --type
// FirstWorkflowTask` on a retrying delivery: it continues from its first
// attempt, which the receiver now accepts, and ends delivered, its attempts
// numbered in the order they were made.
func TestResetToFirstWorkflowTask(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	f, _ := retryingFixture(t, c, st)
	ctx := context.Background()
	h := testenv.History(t, c, f.delivery.WorkflowID)
	var first int64
	for _, ev := range h.GetEvents() {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			first = ev.GetEventId()
			break
		}
	}
	_, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace: testenv.TemporalServer(t).Namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: f.delivery.WorkflowID},
		Reason: "test", WorkflowTaskFinishEventId: first, RequestId: f.delivery.ID,
	})
	if err != nil {
		t.Fatal(err)
	}
	awaitDelivery(t, c, f, time.Minute)
	checkNumbered(t, f, policies.StatusDelivered, 2)
}

// TestAttemptOfEndedDeliveryNotSent: an attempt of a delivery that has
// ended already (a replayed or reset workflow, an operator's action) sends
// nothing: the workflow ends with the delivery's status.
func TestAttemptOfEndedDeliveryNotSent(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	s := startWorkers(t, c, st)
	f := newFixtureOn(t, st, policies.NameWorkfront, "", always(http.StatusOK))
	if _, err := st.FinishDelivery(context.Background(), store.Finish{DeliveryID: f.delivery.ID,
		Status: policies.StatusDeadLettered, Reason: "ended by the test"}); err != nil {
		t.Fatal(err)
	}
	startDelivery(t, c, s, f)
	res := awaitDelivery(t, c, f, time.Minute)
	if res.Status != policies.StatusDeadLettered || res.Attempts != 0 {
		t.Errorf("result %+v, want dead_lettered after no attempt", res)
	}
	if n, as := f.recv.requests(), f.attempts(t); n != 0 || len(as) != 0 {
		t.Errorf("%d requests sent, %d attempt rows, want none", n, len(as))
	}
}

// TestStartFailuresEnd: a delivery whose workflow cannot be started (its
// subscription's policy no longer resolves) ends after
// store.MaxStartAttempts tries, dead-lettered with the start's error.
func TestStartFailuresEnd(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	s := testenv.Starter(t, c, st)
	f := newFixtureOn(t, st, policies.NameWorkfront, "", always(http.StatusOK))
	ctx := context.Background()
	if _, err := st.DB().ExecContext(ctx, `UPDATE subscriptions SET policy = 'custom', retry_policy = '{}' WHERE id = $1`, f.sub.ID); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= store.MaxStartAttempts; i++ {
		if err := s.Start(ctx, []store.Delivery{f.reload(t)}); err == nil {
			t.Fatalf("start %d succeeded", i)
		}
		if d := f.reload(t); d.Status.IsFinal() != (i == store.MaxStartAttempts) {
			t.Fatalf("after %d failed starts the delivery is %s", i, d.Status)
		}
	}
	d := f.reload(t)
	if d.Status != policies.StatusDeadLettered || !strings.Contains(d.FinalReason, starter.ReasonStartFailed) ||
		!strings.Contains(d.FinalReason, "retry_policy.custom") {
		t.Fatalf("delivery %s %q, want dead_lettered with the start's error", d.Status, d.FinalReason)
	}
}

// TestRecordCancelHistory records the history of a delivery cancelled while
// retrying (Delivery version 8) for TestReplayRecordedHistories, with
// HOOKRELAY_RECORD_HISTORIES=1.
func TestRecordCancelHistory(t *testing.T) {
	t.Parallel()
	if os.Getenv("HOOKRELAY_RECORD_HISTORIES") != "1" {
		t.Skip("set HOOKRELAY_RECORD_HISTORIES=1 to record Delivery histories")
	}
	c, st := testenv.Client(t), testenv.Store(t)
	f, _ := retryingFixture(t, c, st)
	ctx := context.Background()
	if err := c.CancelWorkflow(ctx, f.delivery.WorkflowID, ""); err != nil {
		t.Fatal(err)
	}
	_ = c.GetWorkflow(ctx, f.delivery.WorkflowID, "").Get(ctx, nil)
	writeHistory(t, c, f.delivery.WorkflowID, filepath.Join(historiesDir, "v8-custom-cancelled.json"))
}

// TestCancelSequencer: cancelling a Sequencer (the Web UI's Cancel) stops
// only it: the delivery it runs goes on and is delivered, and the sweeper
// wakes the Sequencer again for the delivery left behind it, which is
// delivered in turn.
func TestCancelSequencer(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	s := startWorkers(t, c, st)
	var released atomic.Bool
	ds := publishOrdered(t, c, s, st, func(int) int {
		if !released.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, 2)
	waitStatus(t, st, ds[0], policies.StatusRetrying)
	ctx := context.Background()
	seq := workflows.SequencerWorkflowID(ds[0].SubscriptionID, *ds[0].OrderingKey)
	if err := c.CancelWorkflow(ctx, seq, ""); err != nil {
		t.Fatal(err)
	}
	var canceled *temporal.CanceledError
	if err := c.GetWorkflow(ctx, seq, "").Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("sequencer ended with %v, want canceled", err)
	}
	released.Store(true)
	waitStatus(t, st, ds[0], policies.StatusDelivered)
	if err := s.Reconcile(ctx, 0); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, ds[1], policies.StatusDelivered)
}
