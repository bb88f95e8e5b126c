package bench

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The floor: the cheapest delivery the design (one workflow per delivery)
// allows on the same server. A bare workflow, started with eager start by a
// client whose worker runs in the same process, whose first workflow task
// POSTs the same body to the same receiver in a local activity and
// completes: one workflow task, no activity task, no PostgreSQL, no API.
// Every figure of the shipped benchmark is a ratio to it.
const (
	floorWorkflow = "BenchFloor"
	floorPath     = "/floor"
)

func floorFlow(ctx workflow.Context, url, id string, i int) error {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second, RetryPolicy: postRetry})
	return workflow.ExecuteLocalActivity(ctx, baselinePost, url, id, i).Get(ctx, nil)
}

// floorSender starts floor workflows, each delivering to the receiver.
func floorSender(c client.Client, rcvURL, prefix string) sendFunc {
	return func(i int) shot {
		id := fmt.Sprintf("%s-%d", prefix, i)
		s := shot{sent: time.Now(), workflowID: id}
		opts := client.StartWorkflowOptions{ID: id, TaskQueue: baselineQueue, EnableEagerStart: true}
		_, s.err = c.ExecuteWorkflow(context.Background(), opts, floorWorkflow, rcvURL+floorPath, id, i)
		s.answered = time.Now()
		s.keys = []string{hitKey(id, floorPath)}
		return s
	}
}
