package worker_test

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// TestRetryBudgetIsTheQueues: the retry budget is Temporal's rate limit on
// the retries task queue, set by the workers as they poll, so that it bounds
// all worker processes together (docs/endpoints.md#isolation); the
// deliveries queue, where first attempts are handed over, has none.
func TestRetryBudgetIsTheQueues(t *testing.T) {
	c, st := testenv.Client(t), testenv.Store(t)
	opts := worker.Options{HTTPConcurrency: 4, RetriesPerSecond: 7}
	testenv.Worker(t, c, st, opts)
	q := testenv.Queues(t)
	if rps, src := queueRateLimit(t, q.Retries); rps != 7 || src != enumspb.RATE_LIMIT_SOURCE_WORKER {
		t.Fatalf("retries queue: rate limit %v from %v, want 7 from the worker", rps, src)
	}
	if _, src := queueRateLimit(t, q.Deliveries); src == enumspb.RATE_LIMIT_SOURCE_WORKER {
		t.Fatal("deliveries queue: a rate limit set by the worker, want none")
	}
}

// queueRateLimit is the effective rate limit of activity task queue name
// and where it comes from, once a worker has polled it.
func queueRateLimit(t *testing.T, name string) (float32, enumspb.RateLimitSource) {
	t.Helper()
	c := testenv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := c.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
			Namespace:     "default",
			TaskQueue:     &taskqueuepb.TaskQueue{Name: name, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetPollers()) > 0 {
			rl := resp.GetEffectiveRateLimit()
			return rl.GetRequestsPerSecond(), rl.GetRateLimitSource()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: no poller in 30 s", name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
