package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// lateAnswerBudget bounds the recording and the signal of one late answer.
const lateAnswerBudget = 30 * time.Second

// postAllowingLate is post for an attempt whose policy takes a late answer
// (in.LateAnswer longer than in.Timeout; docs/policies.md#eventgrid): the
// attempt is recorded as a timeout when no answer came within in.Timeout,
// as always, but its request stays open until in.LateAnswer, and a success
// that comes by then is recorded on row and ends the delivery
// (awaitLate).
func (a *Activities) postAllowingLate(ctx context.Context, t store.Target, in workflows.DeliverInput, body []byte, row int64) store.Attempt {
	long := in
	long.Timeout = in.LateAnswer
	answers := make(chan store.Attempt, 1)
	sent := time.Now()
	go func() { answers <- a.post(context.WithoutCancel(ctx), t, long, body) }()
	timer := time.NewTimer(in.Timeout)
	defer timer.Stop()
	select {
	case rec := <-answers:
		return rec
	case <-timer.C:
	}
	go a.awaitLate(activity.GetInfo(ctx).WorkflowExecution.ID, in, row, answers)
	return store.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt, ScheduledAt: in.ScheduledAt,
		StartedAt: sent, DurationMs: msSince(sent), ErrorKind: workflows.KindTimeout,
		ErrorMessage: fmt.Sprintf("no answer within %v; a success within %v still delivers it", in.Timeout, in.LateAnswer)}
}

// awaitLate waits for the answer of a request recorded as a timeout on row;
// a success records the delivery delivered (store.RecordLateAnswer) and
// tells its workflow (workflows.SignalLateAnswer), so that the retries
// scheduled meanwhile are dropped: best effort, as Azure's, since a retry
// may have gone out already.
func (a *Activities) awaitLate(workflowID string, in workflows.DeliverInput, row int64, answers <-chan store.Attempt) {
	rec := <-answers
	if !rec.Success {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lateAnswerBudget)
	defer cancel()
	delivered, err := a.Store.RecordLateAnswer(ctx, row, in.DeliveryID, rec)
	if err != nil {
		a.Logger.WarnContext(ctx, "late_answer_not_recorded", "delivery_id", in.DeliveryID, "error", err)
		return
	}
	a.Logger.InfoContext(ctx, "late_answer", "delivery_id", in.DeliveryID, "attempt", in.Attempt,
		"status_code", rec.StatusCode, "duration_ms", rec.DurationMs, "delivered", delivered)
	if !delivered || a.Temporal == nil {
		return
	}
	late := workflows.LateAnswerResult{Attempt: in.Attempt, StatusCode: rec.StatusCode, DurationMs: rec.DurationMs}
	if err := a.Temporal.SignalWorkflow(ctx, workflowID, "", workflows.SignalLateAnswer, late); err != nil {
		a.Logger.WarnContext(ctx, "late_answer_not_signalled", "delivery_id", in.DeliveryID, "error", err)
	}
}
