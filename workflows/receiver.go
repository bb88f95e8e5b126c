package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// changeReceiverProtection marks issue 16's receiver protection: a retry
// pushed back by the receiver's Retry-After, and attempts held back by the
// endpoint's concurrency cap or rate limit. Only deliveries that met either
// reach it (histories from before hold no Retry-After or Throttled result),
// so it costs nothing to the others.
const changeReceiverProtection = "receiver-protection"

// retryAfter is when the retry due by the schedule is due once the last
// answer's Retry-After is honoured (policies.RetryAfterDue).
func (r *retries) retryAfter(due, now time.Time) time.Time {
	if r.last.RetryAfter.IsZero() {
		return due
	}
	if workflow.GetVersion(r.ctx, changeReceiverProtection, workflow.DefaultVersion, 1) < 1 {
		return due
	}
	return r.policy.RetryAfterDue(due, now, r.last.RetryAfter, r.deadline())
}

// holdBack waits after an attempt the endpoint's limits held back, on a
// durable timer (policies.ThrottleWait): no attempt was made, so nothing is
// counted. It reports false when the wait would end past the deadline: the
// policy's time-to-live, and, once an attempt failed, its retry window
// (before any failure there is no window to use up).
func (r *retries) holdBack(hint time.Duration) bool {
	workflow.GetVersion(r.ctx, changeReceiverProtection, workflow.DefaultVersion, 1)
	r.throttled++
	wait := policies.ThrottleWait(hint, r.throttled, r.seed)
	deadline := r.deadline()
	if r.pr.FirstFailureAt.IsZero() && r.policy.TTL <= 0 {
		deadline = time.Time{}
	}
	if !deadline.IsZero() && workflow.Now(r.ctx).Add(wait).After(deadline) {
		return false
	}
	return workflow.Sleep(r.ctx, wait) == nil
}
