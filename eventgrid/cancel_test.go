package eventgrid_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// retryingBatch publishes 3 events to a batching subscription whose
// receiver always fails, and waits until their one batch is retrying; it
// returns the subscription's id and the batch's workflow id.
func retryingBatch(t *testing.T, st *store.Store, c client.Client, name string) (subID, batchWorkflow string) {
	t.Helper()
	runWorker(t, c, st)
	h := apiServer(t, st, c, policies.EdgeDefaults{})
	failing := newReceiver(t, always(http.StatusInternalServerError))
	sub := putSub(t, st, h, name, "?mode=edge", `{`+webhook(failing.URL, "")+`,
		"filter":{"includedEventTypes":["c.evt"]},"outputBatching":{"maxEventsPerBatch":10}}`)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/eventgrid/events", "application/json", strings.NewReader(egEvents("c", "c.evt", 3)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitStatus(t, st, sub.ID, string(policies.StatusRetrying), 3)
	var batchID string
	if err := st.DB().Get(&batchID, `SELECT DISTINCT batch_id FROM deliveries WHERE subscription_id = $1`, sub.ID); err != nil {
		t.Fatal(err)
	}
	return sub.ID, workflows.BatchWorkflowID(batchID)
}

// deadLettered counts the deliveries of subscription subID dead-lettered,
// with no next attempt, with a reason that has reason in it.
func deadLettered(t *testing.T, st *store.Store, subID, reason string) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM deliveries d JOIN dead_letters l ON l.delivery_id = d.id
		WHERE d.subscription_id = $1 AND d.status = 'dead_lettered' AND strpos(d.final_reason, $2) > 0
		  AND d.next_attempt_at IS NULL`, subID, reason); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTerminatedBatchReconciled: a Batch workflow terminated in Temporal:
// the sweeper's reconciliation ends each of its deliveries dead-lettered,
// naming the termination.
func TestTerminatedBatchReconciled(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	subID, batch := retryingBatch(t, st, c, "terminated")
	ctx := context.Background()
	if err := c.TerminateWorkflow(ctx, batch, "", "batch retired"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Starter(t, c, st).Reconcile(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := deadLettered(t, st, subID, starter.ReasonTerminated); n != 3 {
		t.Fatalf("%d deliveries dead-lettered as terminated, want 3", n)
	}
}

// TestCancelBatcherThenBatch: issue 52. Cancelling a subscription's Batcher
// (the Web UI's Cancel) stops only it: its Batch goes on retrying.
// Cancelling the Batch ends every delivery in it at once, dead-lettered
// with workflows.ReasonCancelled (redrivable).
func TestCancelBatcherThenBatch(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	subID, batch := retryingBatch(t, st, c, "cancelled")
	ctx := context.Background()
	var canceled *temporal.CanceledError
	batcher := workflows.BatcherWorkflowID(subID)
	if err := c.CancelWorkflow(ctx, batcher, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, batcher, "").Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("batcher ended with %v, want canceled", err)
	}
	if d, err := c.DescribeWorkflowExecution(ctx, batch, ""); err != nil || d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
		t.Fatalf("batch after its batcher was cancelled: %v %v, want running", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	if err := c.CancelWorkflow(ctx, batch, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, batch, "").Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("batch ended with %v, want canceled", err)
	}
	if n := deadLettered(t, st, subID, workflows.ReasonCancelled); n != 3 {
		t.Fatalf("%d deliveries dead-lettered as cancelled, want 3", n)
	}
}
