package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ValidationInput is the input of the EventGridValidation workflow.
type ValidationInput struct {
	SubscriptionID string
	Code           string
}

// ValidationResult is the result of the EventGridValidation workflow.
type ValidationResult struct {
	Validated bool
}

// ValidationStartOptions are the options the API starts a handshake with;
// one workflow per (subscription, code).
func ValidationStartOptions(q Queues, in ValidationInput) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    "eventgrid-validation/" + in.SubscriptionID + "/" + in.Code,
		TaskQueue:             q.Main,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
}

// EventGridValidation performs the validation handshake of a new Event Grid
// WebHook subscription (docs/policies.md#eventgrid): the validation event is sent
// up to 6 times over about 5 minutes; if the endpoint never echoes the code
// the subscription is marked failed and its waiting events are dropped.
func EventGridValidation(ctx workflow.Context, in ValidationInput) (ValidationResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 10 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 2 * time.Minute, MaximumAttempts: 6,
		},
	})
	var res ValidationResult
	err := workflow.ExecuteActivity(actx, ActivityValidateEventGrid, in).Get(ctx, &res)
	if err == nil {
		return res, nil
	}
	workflow.GetLogger(ctx).Warn("validation_failed", "subscription_id", in.SubscriptionID, "error", err)
	bctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
	return ValidationResult{}, workflow.ExecuteActivity(bctx, ActivityFailEventGridValidation, in).Get(ctx, nil)
}
