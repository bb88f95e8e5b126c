package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// DeadLetterBlobWorkflowType is the registered name of DeadLetterBlob.
const DeadLetterBlobWorkflowType = "DeadLetterBlob"

// The activities of DeadLetterBlob.
const (
	ActivityWriteDeadLetterBlob  = "WriteDeadLetterBlob"
	ActivityGiveUpDeadLetterBlob = "GiveUpDeadLetterBlob"
)

// DeadLetterBlobRetryFor is how long a storage account that stays
// unreachable is retried before the blob is given up, as Azure Event Grid
// does (docs/eventgrid.md#dead-letters-in-azure-blob-storage).
const DeadLetterBlobRetryFor = 4 * time.Hour

// deadLetterBlobRetry is the back-off between tries of the write: 5 s,
// doubling up to 5 minutes, for DeadLetterBlobRetryFor in all (about 55
// tries; the bound on tries is one those 4 hours reach first).
var deadLetterBlobRetry = &temporal.RetryPolicy{
	InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
	MaximumAttempts: 100,
}

// DeadLetterBlobInput is the input of DeadLetterBlob: the dead letter and
// where its subscription said to write it when it was made.
type DeadLetterBlobInput struct {
	DeadLetterID string
	AccountID    string
	// StorageAccount and Container are the blob destination, in the
	// storage account of StorageResourceID.
	StorageAccount    string
	Container         string
	StorageResourceID string
	// Delay is how long to wait before writing
	// (HOOKRELAY_EVENTGRID_DEADLETTER_DELAY).
	Delay time.Duration
}

// DeadLetterBlobResult is the result of DeadLetterBlob and of its write.
type DeadLetterBlobResult struct {
	// URL is the blob's; empty when nothing was written.
	URL string
	// GaveUp is true when the write was given up.
	GaveUp bool
}

// GiveUpInput is the input of GiveUpDeadLetterBlob: the dead letter and the
// last error of its write.
type GiveUpInput struct {
	DeadLetterBlobInput
	Error string
}

// DeadLetterBlobWorkflowID is the id of a dead letter's blob workflow: one per
// dead letter, never reused, so its blob is written by one workflow however
// often it is started.
func DeadLetterBlobWorkflowID(deadLetterID string) string { return "deadletter-blob/" + deadLetterID }

// DeadLetterBlobStartOptions are the options DeadLetterBlob is started with.
func DeadLetterBlobStartOptions(q Queues, in DeadLetterBlobInput) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    DeadLetterBlobWorkflowID(in.DeadLetterID),
		TaskQueue:             q.OrDefault().Main,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
}

// DeadLetterBlob writes a dead letter to Azure Blob Storage as Event Grid
// does: after in.Delay (a durable timer), one activity whose retry policy
// keeps trying for DeadLetterBlobRetryFor; then, if the account never
// answered, GiveUpDeadLetterBlob records it. The dead letter itself stays in
// hookrelay's store either way.
func DeadLetterBlob(ctx workflow.Context, in DeadLetterBlobInput) (DeadLetterBlobResult, error) {
	if in.Delay > 0 {
		if err := workflow.Sleep(ctx, in.Delay); err != nil {
			return DeadLetterBlobResult{}, err
		}
	}
	wctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: DeadLetterBlobRetryFor,
		RetryPolicy:            deadLetterBlobRetry,
	})
	var res DeadLetterBlobResult
	err := workflow.ExecuteActivity(wctx, ActivityWriteDeadLetterBlob, in).Get(ctx, &res)
	if err == nil {
		return res, nil
	}
	workflow.GetLogger(ctx).Warn("dead_letter_blob_given_up", "dead_letter_id", in.DeadLetterID, "error", err)
	gctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
	err = workflow.ExecuteActivity(gctx, ActivityGiveUpDeadLetterBlob, GiveUpInput{in, err.Error()}).Get(ctx, nil)
	return DeadLetterBlobResult{GaveUp: true}, err
}
