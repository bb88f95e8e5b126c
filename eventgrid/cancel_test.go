package eventgrid_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestCancelBatcherThenBatch: issue 52. Cancelling a subscription's Batcher
// (the Web UI's Cancel) stops only it: its Batch goes on retrying.
// Cancelling the Batch ends every delivery in it at once, dead-lettered
// with workflows.ReasonCancelled (redrivable).
func TestCancelBatcherThenBatch(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	c := testenv.Client(t)
	runWorker(t, c, st)
	h := apiServer(t, st, c, policies.EdgeDefaults{})
	failing := newReceiver(t, always(http.StatusInternalServerError))
	sub := putSub(t, st, h, "cancelled", "?mode=edge", `{`+webhook(failing.URL, "")+`,
		"filter":{"includedEventTypes":["c.evt"]},"outputBatching":{"maxEventsPerBatch":10}}`)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/eventgrid/events", "application/json", strings.NewReader(egEvents("c", "c.evt", 3)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitStatus(t, st, sub.ID, string(policies.StatusRetrying), 3)
	ctx := context.Background()
	var canceled *temporal.CanceledError
	batcher := workflows.BatcherWorkflowID(sub.ID)
	if err := c.CancelWorkflow(ctx, batcher, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, batcher, "").Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("batcher ended with %v, want canceled", err)
	}
	var batchID string
	if err := st.DB().Get(&batchID, `SELECT DISTINCT batch_id FROM deliveries WHERE subscription_id = $1`, sub.ID); err != nil {
		t.Fatal(err)
	}
	batch := workflows.BatchWorkflowID(batchID)
	if d, err := c.DescribeWorkflowExecution(ctx, batch, ""); err != nil || d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
		t.Fatalf("batch after its batcher was cancelled: %v %v, want running", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	if err := c.CancelWorkflow(ctx, batch, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, batch, "").Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("batch ended with %v, want canceled", err)
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM deliveries d JOIN dead_letters l ON l.delivery_id = d.id
		WHERE d.subscription_id = $1 AND d.status = 'dead_lettered' AND d.final_reason = $2 AND d.next_attempt_at IS NULL`,
		sub.ID, workflows.ReasonCancelled); err != nil || n != 3 {
		t.Fatalf("%d deliveries dead-lettered as cancelled (%v), want 3", n, err)
	}
}
