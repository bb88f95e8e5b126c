package worker

import (
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/workflows"
)

// registerEventGrid registers the Event Grid workflows (batcher, batch,
// validation handshake, dead-letter blob) and puts DeliverBatch on the two HTTP queues; the
// other Event Grid activities run on the main queue with the rest.
func registerEventGrid(main, deliveries, retries sdkworker.Registry, acts *activities.Activities) {
	main.RegisterWorkflowWithOptions(workflows.Batcher, workflow.RegisterOptions{Name: "Batcher"})
	main.RegisterWorkflowWithOptions(workflows.Batch, workflow.RegisterOptions{Name: "Batch"})
	main.RegisterWorkflowWithOptions(workflows.EventGridValidation, workflow.RegisterOptions{Name: "EventGridValidation"})
	main.RegisterWorkflowWithOptions(workflows.DeadLetterBlob, workflow.RegisterOptions{Name: workflows.DeadLetterBlobWorkflowType})
	deliverBatch := activity.RegisterOptions{Name: workflows.ActivityDeliverBatch}
	deliveries.RegisterActivityWithOptions(acts.DeliverBatch, deliverBatch)
	retries.RegisterActivityWithOptions(acts.DeliverBatch, deliverBatch)
}
