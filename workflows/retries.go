package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// steps are what a Delivery and a Batch do differently: the activity that
// makes an attempt, how waiting for the endpoint and the in-flight status
// are recorded, and how the end is.
type steps interface {
	attempt(scheduled time.Time, probe bool) (DeliverResult, error)
	waitForEndpoint() (probe bool, ok bool)
	setStatus(status policies.Status, next *time.Time) string
	finish(status policies.Status, reason string) (DeliveryResult, error)
}

// retries is what a Delivery or a Batch keeps between its attempts, and the
// loop that drives them under its policy.
type retries struct {
	ctx    workflow.Context
	policy policies.Policy
	seed   uint64
	pr     policies.Progress
	last   DeliverResult
	// internalFailures counts consecutive failures of hookrelay itself;
	// internalSince is when the first of them came.
	internalFailures int
	internalSince    time.Time
	// internalGrace is true from versionInternalGrace on (internalDeadline).
	internalGrace bool
	// throttled counts consecutive attempts held back by the endpoint's
	// limits.
	throttled int
}

// run makes attempts through s until one is delivered or the policy ends the
// retries: one activity per attempt, a durable timer before each retry. The
// time-to-live counts from publishedAt when it is earlier than now.
func (r *retries) run(s steps, publishedAt time.Time) (DeliveryResult, error) {
	r.pr.FirstAttemptAt = workflow.Now(r.ctx)
	scheduled := r.pr.FirstAttemptAt
	if !publishedAt.IsZero() && publishedAt.Before(r.pr.FirstAttemptAt) {
		r.pr.FirstAttemptAt = publishedAt
	}
	probe := false
	for {
		res, err := s.attempt(scheduled, probe)
		if err != nil {
			r.internalFailures++
			if r.internalFailures == 1 {
				r.internalSince = workflow.Now(r.ctx)
			}
			switch onInternalFailure(r.ctx, r.internalFailures, r.internalDeadline()) {
			case giveUp:
				return s.finish(r.policy.FinalStatus(), internalReason(err))
			case tryAgain:
				scheduled = workflow.Now(r.ctx)
				continue
			}
			res = DeliverResult{ErrorKind: "internal", Error: err.Error()}
		}
		r.internalFailures = 0
		if res.Ended != "" {
			return r.endedBefore(res), nil
		}
		if res.Throttled {
			if !r.holdBack(res.RetryIn) {
				return s.finish(r.policy.FinalStatus(), string(r.policy.DeadlineStop()))
			}
			scheduled = workflow.Now(r.ctx)
			continue
		}
		r.throttled = 0
		if res.Skipped {
			var ok bool
			if probe, ok = s.waitForEndpoint(); !ok {
				return s.finish(r.policy.FinalStatus(), string(r.policy.DeadlineStop()))
			}
			scheduled = workflow.Now(r.ctx)
			continue
		}
		probe = false
		r.last = res
		r.pr.Attempts++
		due, status, reason := r.judge()
		if status != "" {
			return s.finish(status, reason)
		}
		if err := r.waitUntil(s, due); err != nil {
			return DeliveryResult{}, err
		}
		scheduled = due
	}
}

// judge reads the last attempt under the policy: the final status and its
// reason when the retries are over, else when the next attempt is due.
func (r *retries) judge() (due time.Time, status policies.Status, reason string) {
	now := workflow.Now(r.ctx)
	if r.last.ErrorKind == KindBlocked {
		return time.Time{}, r.policy.FinalStatus(), "Blocked: " + r.last.Error
	}
	switch r.policy.Classify(r.last.StatusCode) {
	case policies.Delivered:
		return time.Time{}, policies.StatusDelivered, ""
	case policies.Undeliverable:
		return time.Time{}, r.policy.UndeliverableStatus(), fmt.Sprintf("Undeliverable: HTTP %d", r.last.StatusCode)
	}
	if r.pr.FirstFailureAt.IsZero() {
		r.pr.FirstFailureAt = now
	}
	r.pr.LastFailureAt = now
	due, stop := r.next()
	if stop != policies.NoStop {
		return time.Time{}, r.policy.FinalStatus(), string(stop)
	}
	return r.retryAfter(due, now), "", ""
}

// changeNoCatchUp marks docs/policies.md#no-catch-up-bursts (issue 11):
// from version 1 the retry slots of an offset schedule that passed while the
// delivery could not attempt are skipped (policies.NextSlot); deliveries
// started before replay as they ran (every overdue slot at once).
const changeNoCatchUp = "no-catch-up"

// next is when the next retry is due under the policy, or why there is none.
func (r *retries) next() (time.Time, policies.Stop) {
	if workflow.GetVersion(r.ctx, changeNoCatchUp, workflow.DefaultVersion, 1) < 1 {
		return r.policy.Next(r.pr, r.seed)
	}
	due, skipped, stop := r.policy.NextSlot(r.pr, r.seed)
	r.pr.Skipped += skipped
	return due, stop
}

// waitUntil records the retrying status and sleeps on a durable timer until
// due. The wait is measured after the bookkeeping, which Temporal may have
// retried, so that it never pushes the retry back; at least 1 ms keeps one
// timer command per retry (replay-safe) when it took longer than the wait.
func (r *retries) waitUntil(s steps, due time.Time) error {
	s.setStatus(policies.StatusRetrying, &due)
	wait := max(due.Sub(workflow.Now(r.ctx)), time.Millisecond)
	return workflow.NewTimer(r.ctx, wait).Get(r.ctx, nil)
}

// internalDeadline is how long failures of hookrelay itself may hold the
// delivery back: from versionInternalGrace the policy's InternalDeadline,
// before it the delivery's deadline.
func (r *retries) internalDeadline() time.Time {
	if !r.internalGrace {
		return r.deadline()
	}
	return r.policy.InternalDeadline(r.deadlineProgress(), r.internalSince)
}

// deadline is the time after which there can be no more retries, or zero
// when the policy sets none.
func (r *retries) deadline() time.Time { return r.policy.Deadline(r.deadlineProgress()) }

// deadlineProgress is the progress deadlines count from: before any failure,
// from the first attempt.
func (r *retries) deadlineProgress() policies.Progress {
	pr := r.pr
	if pr.FirstFailureAt.IsZero() {
		pr.FirstFailureAt = pr.FirstAttemptAt
	}
	return pr
}
