package api

import (
	"context"
	"net/http"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// validationID returns the id of a stored subscription's handshake workflow,
// terminated when the test ends (no worker runs it here).
func validationID(t *testing.T, st *store.Store, c client.Client, name string) string {
	t.Helper()
	sub, err := st.GetSubscriptionByName(context.Background(), store.DefaultAccount, name)
	if err != nil {
		t.Fatal(err)
	}
	in := workflows.ValidationInput{SubscriptionID: sub.ID, Code: eventgrid.Of(sub.Options).ValidationCode}
	id := workflows.ValidationStartOptions(testenv.Queues(t), in).ID
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), id, "", "test ended") })
	return id
}

// TestEventGridDeleteBeforeValidationDrops: deleting a subscription that
// still awaits its handshake drops the events it was holding.
func TestEventGridDeleteBeforeValidationDrops(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	if code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/doomed", cloudSub("http://127.0.0.1:1/hook")); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, sub)
	}
	validationID(t, st, c, "doomed")
	if code, pub := call(t, e, http.MethodPost, "/eventgrid/events", handshakeEvent); code != http.StatusOK {
		t.Fatalf("publish: %d %v", code, pub)
	}
	if code, got := call(t, e, http.MethodDelete, "/eventgrid/subscriptions/doomed", ""); code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, got)
	}
	_, ev := call(t, e, http.MethodGet, "/v1/events/before-validation", "")
	ds, _ := ev["deliveries"].([]any)
	if len(ds) != 1 || jpath(ds[0], "status") != string(policies.StatusDropped) ||
		jpath(ds[0], "final_reason") != store.ReasonDeletedBeforeValidation {
		t.Fatalf("the held event after the delete: %v", ev)
	}
}

// TestEventGridRePutRestartsPendingValidation: PUTting a pending
// subscription again with the same URL starts its handshake again when the
// first one is gone (here terminated, as a start that never happened),
// with the same code; a handshake still running is left alone.
func TestEventGridRePutRestartsPendingValidation(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	body := cloudSub("http://127.0.0.1:1/hook")
	if code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/retry", body); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, sub)
	}
	ctx, id := context.Background(), validationID(t, st, c, "retry")
	first, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/retry", body); code != http.StatusOK {
		t.Fatalf("re-put while running: %d %v", code, sub)
	}
	runID := first.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if d, err := c.DescribeWorkflowExecution(ctx, id, ""); err != nil || d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != runID {
		t.Fatalf("a running handshake was replaced: %v", err)
	}
	if err := c.TerminateWorkflow(ctx, id, runID, "lost"); err != nil {
		t.Fatal(err)
	}
	if code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/retry", body); code != http.StatusOK ||
		jpath(sub, "properties", "hookrelay", "validation") != eventgrid.ValidationPending {
		t.Fatalf("re-put: %d %v", code, sub)
	}
	if validationID(t, st, c, "retry") != id {
		t.Fatal("the re-put changed the validation code")
	}
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	info := d.GetWorkflowExecutionInfo()
	if err != nil || info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetExecution().GetRunId() == runID {
		t.Fatalf("after the re-put: %v %v", info.GetStatus(), err)
	}
}
