package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// startWorkers serves hookrelay's three task queues on the shared dev server
// with the real workflow and activities on st, as `hookrelay worker` does,
// until the test ends. Tests that call it must not run in parallel: the
// task queue names are fixed.
func startWorkers(t *testing.T, c client.Client, st *store.Store) {
	t.Helper()
	acts := activities.New(st, testenv.Logger())
	main := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
	httpOpts := sdkworker.Options{DisableWorkflowWorker: true}
	deliveries := sdkworker.New(c, workflows.DeliveriesQueue, httpOpts)
	retries := sdkworker.New(c, workflows.RetriesQueue, httpOpts)
	worker.Register(main, deliveries, retries, acts)
	for _, w := range []sdkworker.Worker{main, deliveries, retries} {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
}

// startDelivery starts f's Delivery workflow the way the API does, and
// terminates it at the end of the test if it is still running then.
func startDelivery(t *testing.T, c client.Client, f *fixture) {
	t.Helper()
	ctx := context.Background()
	s := &starter.Starter{Store: f.st, Temporal: c, Logger: testenv.Logger()}
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
// its result.
func awaitDelivery(t *testing.T, c client.Client, f *fixture, limit time.Duration) workflows.DeliveryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var res workflows.DeliveryResult
	if err := c.GetWorkflow(ctx, f.delivery.WorkflowID, "").Get(ctx, &res); err != nil {
		t.Fatalf("workflow %s: %v", f.delivery.WorkflowID, err)
	}
	return res
}
