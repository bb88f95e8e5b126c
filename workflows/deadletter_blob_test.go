package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/workflows"
)

// blobRun runs DeadLetterBlob in the time-skipping environment with a write
// that fails until failFor has passed since the workflow started, and
// returns its result, when the write succeeded (relative to the start; minus
// when it was given up), and what the give-up got (nil: not called).
func blobRun(t *testing.T, in workflows.DeadLetterBlobInput, failFor time.Duration) (workflows.DeadLetterBlobResult, time.Duration, *workflows.GiveUpInput) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.DeadLetterBlob, workflow.RegisterOptions{Name: workflows.DeadLetterBlobWorkflowType})
	start := env.Now()
	var wroteAt time.Duration
	env.RegisterActivityWithOptions(func(ctx context.Context, got workflows.DeadLetterBlobInput) (workflows.DeadLetterBlobResult, error) {
		if got != in {
			t.Errorf("write got %+v, want %+v", got, in)
		}
		if now := env.Now().Sub(start); now < failFor {
			return workflows.DeadLetterBlobResult{}, errors.New("storage account unreachable")
		}
		wroteAt = env.Now().Sub(start)
		return workflows.DeadLetterBlobResult{URL: "http://blob"}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityWriteDeadLetterBlob})
	var gaveUp *workflows.GiveUpInput
	env.RegisterActivityWithOptions(func(ctx context.Context, g workflows.GiveUpInput) error {
		gaveUp, wroteAt = &g, -env.Now().Sub(start)
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityGiveUpDeadLetterBlob})
	env.ExecuteWorkflow(workflows.DeadLetterBlobWorkflowType, in)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res workflows.DeadLetterBlobResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, wroteAt, gaveUp
}

// TestDeadLetterBlobDelayAndRetry: the write waits for the delay, and a
// storage account down for an hour is retried until it answers.
func TestDeadLetterBlobDelayAndRetry(t *testing.T) {
	in := workflows.DeadLetterBlobInput{DeadLetterID: "dl_1", AccountID: "acct", StorageAccount: "sa",
		Container: "c", Delay: 5 * time.Minute}
	res, at, gaveUp := blobRun(t, in, 0)
	if res.URL != "http://blob" || at != 5*time.Minute || gaveUp != nil {
		t.Errorf("no failure: %+v written at %v, gave up %v; want written at the 5 min delay", res, at, gaveUp)
	}
	res, at, gaveUp = blobRun(t, in, time.Hour)
	if res.URL != "http://blob" || at < time.Hour || at > time.Hour+5*time.Minute || gaveUp != nil {
		t.Errorf("down for 1 h: %+v written at %v, gave up %v; want written within 5 min of its return", res, at, gaveUp)
	}
}

// TestDeadLetterBlobGivesUpAfter4Hours: an account that stays down is retried
// for 4 hours; then the write is given up, with the last error.
func TestDeadLetterBlobGivesUpAfter4Hours(t *testing.T) {
	in := workflows.DeadLetterBlobInput{DeadLetterID: "dl_1", AccountID: "acct", StorageAccount: "sa", Container: "c"}
	res, at, gaveUp := blobRun(t, in, 100*time.Hour)
	if !res.GaveUp || gaveUp == nil || gaveUp.DeadLetterID != "dl_1" || gaveUp.Error == "" {
		t.Fatalf("result %+v, give-up %+v: want given up with the error", res, gaveUp)
	}
	if -at < workflows.DeadLetterBlobRetryFor-5*time.Minute || -at > workflows.DeadLetterBlobRetryFor {
		t.Errorf("given up after %v, want after about %v", -at, workflows.DeadLetterBlobRetryFor)
	}
}
