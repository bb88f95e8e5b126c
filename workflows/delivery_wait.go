package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// changeInternalNotAttempt marks the change after which a failure of
// hookrelay itself (the Deliver activity failing rather than the endpoint)
// no longer counts as a delivery attempt; executions from before it replay
// with the old rule.
const changeInternalNotAttempt = "internal-failure-not-attempt"

// Backoff between tries after hookrelay itself failed: 10 s doubling to 5 min.
const (
	internalBackoffMin = 10 * time.Second
	internalBackoffMax = 5 * time.Minute
)

// notCountedAsAttempt reports whether this execution follows the rule that
// hookrelay's own failures are not attempts.
func notCountedAsAttempt(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, changeInternalNotAttempt, workflow.DefaultVersion, 1) == 1
}

// backOffInternal waits before trying again after hookrelay itself failed
// for the failures-th time in a row, so that a database outage does not use
// up the endpoint's retries. It reports false, without waiting, when the
// wait would end after the deadline (zero: none).
func backOffInternal(ctx workflow.Context, failures int, deadline time.Time) bool {
	wait := min(internalBackoffMin<<min(failures-1, 5), internalBackoffMax)
	if !deadline.IsZero() && workflow.Now(ctx).Add(wait).After(deadline) {
		return false
	}
	return workflow.Sleep(ctx, wait) == nil
}

// deadline is the time after which the delivery can have no more retries, or
// zero when its policy sets none.
func (d *delivery) deadline() time.Time { return retryDeadline(d.in.Policy, d.pr) }

// retryDeadline is the time after which a delivery (or batch) that has made
// pr's attempts can have no more retries, or zero when p sets none; before
// any failure it counts from the first attempt.
func retryDeadline(p policies.Policy, pr policies.Progress) time.Time {
	if pr.FirstFailureAt.IsZero() {
		pr.FirstFailureAt = pr.FirstAttemptAt
	}
	return p.Deadline(pr)
}

// waitForEndpoint parks the delivery while its endpoint is disabled or frozen,
// until a release or probe signal comes or the policy's deadline passes. It
// reports whether the next attempt is a probe, and false ok at the deadline.
// If the endpoint is enabled again by the time the delivery is recorded as
// waiting, it does not wait: the release may have gone out before.
func (d *delivery) waitForEndpoint() (probe bool, ok bool) {
	deadline := d.deadline()
	if !deadline.IsZero() && !deadline.After(workflow.Now(d.ctx)) {
		return false, false
	}
	if d.setStatus("waiting", nil) == policies.StateEnabled {
		return false, true
	}
	return awaitEndpoint(d.ctx, deadline)
}

// awaitEndpoint blocks until the endpoint workflow sends a release or a
// probe signal, or the deadline (zero: none) passes. It reports whether the
// next attempt is a probe, and false ok at the deadline.
func awaitEndpoint(wctx workflow.Context, deadline time.Time) (probe bool, ok bool) {
	ctx, cancel := workflow.WithCancel(wctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalRelease), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		ok = true
	})
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalProbe), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		probe, ok = true, true
	})
	if !deadline.IsZero() {
		sel.AddFuture(workflow.NewTimer(ctx, deadline.Sub(workflow.Now(ctx))), func(workflow.Future) {})
	}
	sel.Select(ctx)
	return probe, ok
}
