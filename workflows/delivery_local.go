package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// localAttempt makes the first attempt of a delivery started from
// versionLocalFirstAttempt on as a local activity: it runs in the first
// workflow task, in the worker that holds the workflow, so a delivery that
// succeeds at once costs Temporal one workflow task (no activity task, no
// second workflow task), and its history shows the attempt as a
// LocalActivity marker of type Deliver; from versionFinishInAttempt that
// attempt also records a success as delivered (FinishDelivered), so no
// Finish marker follows it. It is still one execution per attempt, never
// retried by Temporal. Every other attempt (retries, probes,
// a first attempt tried again after hookrelay itself failed) runs as a
// regular activity on its task queue: nil is returned for those.
func (d *delivery) localAttempt(in DeliverInput) workflow.Future {
	if !d.localFirstAttempt || d.firstDone || d.pr.Attempts > 0 || in.Probe {
		return nil
	}
	d.firstDone = true
	in.FinishDelivered = d.finishInAttempt
	in.MayHandOver, in.EndpointID = d.fairShares, d.in.EndpointID
	ctx := localAttemptOptions(d.ctx, d.in.Policy.Timeout)
	return workflow.ExecuteLocalActivity(ctx, ActivityDeliver, in)
}

// localAttemptOptions are the options of an attempt made as a local
// activity (a Delivery's first, or a Sequencer's): one execution, bounded by
// the policy's timeout once it runs, however long it waited for a slot.
func localAttemptOptions(ctx workflow.Context, timeout time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: attemptTimeout(timeout) + localSlotWait,
		StartToCloseTimeout:    attemptTimeout(timeout),
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// localSlotWait is how long a local first attempt may wait for a slot in
// its worker on top of its own run: the SDK otherwise counts that wait
// against the attempt's StartToClose, so that a request sent late would be
// cut before the policy's timeout (its deadline counts from its send:
// activities.Deliver).
const localSlotWait = 5 * time.Minute
