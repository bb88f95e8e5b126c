package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// startWorkers serves hookrelay's task queues on the shared dev server with
// the real workflows and activities on st, as `hookrelay worker` does, on
// queues of the test's own, until the test ends. It returns the starter of
// those queues.
func startWorkers(t *testing.T, c client.Client, st *store.Store) *starter.Starter {
	t.Helper()
	return testenv.Worker(t, c, st, worker.Options{})
}

// startDelivery starts f's Delivery workflow the way the API does, and
// terminates it at the end of the test if it is still running then.
func startDelivery(t *testing.T, c client.Client, s *starter.Starter, f *fixture) {
	t.Helper()
	ctx := context.Background()
	if err := s.Start(ctx, []store.Delivery{f.delivery}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d, err := c.DescribeWorkflowExecution(ctx, f.delivery.WorkflowID, "")
		if err == nil && d.WorkflowExecutionInfo.GetCloseTime() == nil {
			_ = c.TerminateWorkflow(ctx, f.delivery.WorkflowID, "", "test ended")
		}
	})
}

// awaitDelivery waits (at most limit) for f's workflow to end and returns
// its result, and for its delivery row to end too.
func awaitDelivery(t *testing.T, c client.Client, f *fixture, limit time.Duration) workflows.DeliveryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var res workflows.DeliveryResult
	if err := c.GetWorkflow(ctx, f.delivery.WorkflowID, "").Get(ctx, &res); err != nil {
		t.Fatalf("workflow %s: %v", f.delivery.WorkflowID, err)
	}
	// A first-attempt success is written just after its workflow is told
	// (activities.Later): wait for the row too.
	for ctx.Err() == nil && !f.reload(t).Status.IsFinal() {
		time.Sleep(20 * time.Millisecond)
	}
	return res
}
