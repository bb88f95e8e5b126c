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
	// outlive is asked when the time-to-live ends the retries: it ends only
	// what ends (ends says it of one event's progress) and reports whether
	// anything goes on, with r.pr counting from the oldest event left. A
	// Delivery, one event, never goes on; a Batch's events each keep their
	// own time-to-live.
	outlive(ends func(policies.Progress) bool) bool
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
	// late receives SignalLateAnswer (a Delivery from versionFairShares on;
	// nil otherwise); lateAnswer is what it received.
	late       workflow.ReceiveChannel
	lateAnswer *LateAnswerResult
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
				if r.policy.DeadlineStop() == policies.TTLExceeded && s.outlive(r.pastDeadline) {
					scheduled = workflow.Now(r.ctx)
					continue
				}
				return s.finish(r.policy.FinalStatus(), string(r.policy.DeadlineStop()))
			}
			scheduled = workflow.Now(r.ctx)
			continue
		}
		probe = false
		r.count(res, scheduled)
		if r.answeredLate() {
			return s.finish(policies.StatusDelivered, "")
		}
		due, status, reason := r.judge(s)
		if status != "" {
			return s.finish(status, reason)
		}
		if err := r.waitUntil(s, due); err != nil {
			return DeliveryResult{}, err
		}
		if r.answeredLate() {
			return s.finish(policies.StatusDelivered, "")
		}
		scheduled = due
	}
}

// count records res as an attempt made, started at scheduled: from
// versionFromPublication the first one's start is kept, for the retry
// window to count from publication (policies.Progress.FirstStartedAt).
func (r *retries) count(res DeliverResult, scheduled time.Time) {
	r.last = res
	if r.pr.Attempts == 0 && r.pr.FromPublication {
		r.pr.FirstStartedAt = scheduled
	}
	r.pr.Attempts++
}

// judge reads the last attempt under the policy: the final status and its
// reason when the retries are over, else when the next attempt is due.
func (r *retries) judge(s steps) (due time.Time, status policies.Status, reason string) {
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
	skipped := r.pr.Skipped
	due, stop := r.next()
	if stop == policies.TTLExceeded && s.outlive(r.stops) {
		r.pr.Skipped = skipped
		due, stop = r.next()
	}
	if stop != policies.NoStop {
		return time.Time{}, r.policy.FinalStatus(), string(stop)
	}
	moved := r.retryAfter(due, now)
	if r.pr.FromPublication {
		r.pr = r.policy.RetryAfterMoved(r.pr, due, moved)
	}
	return moved, "", ""
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

// stops reports whether the retries of an event with progress pr are over.
func (r *retries) stops(pr policies.Progress) bool {
	if workflow.GetVersion(r.ctx, changeNoCatchUp, workflow.DefaultVersion, 1) < 1 {
		_, stop := r.policy.Next(pr, r.seed)
		return stop != policies.NoStop
	}
	_, _, stop := r.policy.NextSlot(pr, r.seed)
	return stop != policies.NoStop
}

// pastDeadline reports whether the deadline of an event with progress pr has
// passed.
func (r *retries) pastDeadline(pr policies.Progress) bool {
	if pr.FirstFailureAt.IsZero() {
		pr.FirstFailureAt = pr.FirstAttemptAt
	}
	d := r.policy.Deadline(pr)
	return !d.IsZero() && !d.After(workflow.Now(r.ctx))
}

// waitUntil records the retrying status and sleeps on a durable timer until
// due. The wait is measured after the bookkeeping, which Temporal may have
// retried, so that it never pushes the retry back; at least 1 ms keeps one
// timer command per retry (replay-safe) when it took longer than the wait.
func (r *retries) waitUntil(s steps, due time.Time) error {
	s.setStatus(policies.StatusRetrying, &due)
	wait := max(due.Sub(workflow.Now(r.ctx)), time.Millisecond)
	if r.late == nil {
		return workflow.NewTimer(r.ctx, wait).Get(r.ctx, nil)
	}
	ctx, cancel := workflow.WithCancel(r.ctx)
	var err error
	sel := workflow.NewSelector(r.ctx)
	sel.AddFuture(workflow.NewTimer(ctx, wait), func(f workflow.Future) { err = f.Get(ctx, nil) })
	sel.AddReceive(r.late, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(r.ctx, &r.lateAnswer)
		cancel()
	})
	sel.Select(r.ctx)
	return err
}

// answeredLate reports whether a request recorded as a timeout was answered
// with a success within the policy's LateAnswer (SignalLateAnswer): the
// delivery is then delivered, recorded so by the attempt, and its last
// attempt is that answer.
func (r *retries) answeredLate() bool {
	if r.late == nil {
		return false
	}
	if r.lateAnswer == nil && !r.late.ReceiveAsync(&r.lateAnswer) {
		return false
	}
	r.last = DeliverResult{StatusCode: r.lateAnswer.StatusCode, DurationMs: r.lateAnswer.DurationMs,
		Success: true, Finished: true}
	return true
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
