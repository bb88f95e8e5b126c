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

// afterInternal is what follows a failure of hookrelay itself.
type afterInternal int

const (
	// countAsAttempt: the old rule, for executions from before the change.
	countAsAttempt afterInternal = iota
	// tryAgain: the back-off is over; make the attempt again.
	tryAgain
	// giveUp: the back-off would end after the deadline.
	giveUp
)

// onInternalFailure handles the failures-th failure in a row of hookrelay
// itself (counted by the caller): it waits before trying again, so that a
// database outage does not use up the endpoint's retries, unless the wait
// would end after the deadline (zero: none).
func onInternalFailure(ctx workflow.Context, failures int, deadline time.Time) afterInternal {
	if workflow.GetVersion(ctx, changeInternalNotAttempt, workflow.DefaultVersion, 1) != 1 {
		return countAsAttempt
	}
	wait := min(internalBackoffMin<<min(failures-1, 5), internalBackoffMax)
	if !deadline.IsZero() && workflow.Now(ctx).Add(wait).After(deadline) {
		return giveUp
	}
	if workflow.Sleep(ctx, wait) != nil {
		return giveUp
	}
	return tryAgain
}

// internalReason is the final reason of a delivery hookrelay itself could
// not attempt before its deadline.
func internalReason(err error) string { return "hookrelay could not make the attempt: " + err.Error() }

// outlive: a delivery is one event, whose time-to-live ends it.
func (d *delivery) outlive(func(policies.Progress) bool) bool { return false }

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
	if d.setStatus(policies.StatusWaiting, nil) == policies.StateEnabled {
		return false, true
	}
	return awaitEndpoint(d.ctx, deadline, d.cancellable)
}

// awaitEndpoint blocks until the endpoint workflow sends a release or a
// probe signal, or the deadline (zero: none) passes, or, when cancellable,
// the workflow is cancelled. It reports whether the next attempt is a
// probe, and false ok at the deadline or the cancellation.
func awaitEndpoint(wctx workflow.Context, deadline time.Time, cancellable bool) (probe bool, ok bool) {
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
	if cancellable {
		sel.AddReceive(wctx.Done(), func(workflow.ReceiveChannel, bool) {})
	}
	sel.Select(ctx)
	return probe, ok
}
