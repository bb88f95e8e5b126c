package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// handle receives one signal from c and acts on it. It never blocks: a payload
// that cannot be decoded (an operator's malformed signal) is dropped by
// ReceiveAsync, logged and ignored, so the workflow's loop goes on.
func (e *endpoint) handle(name string, c workflow.ReceiveChannel) {
	e.signals++
	switch name {
	case SignalEvaluate, SignalGone:
		var s HealthSignal
		if !e.receive(name, c, &s) {
			return
		}
		if name == SignalGone {
			e.gone(s)
			return
		}
		e.evaluate()
	case SignalProbeResult:
		var r ProbeResult
		if !e.receive(name, c, &r) {
			return
		}
		e.probeResult(r)
	default:
		var o OperatorSignal
		if !e.receive(name, c, &o) {
			return
		}
		e.operator(name, o.Reason)
	}
}

// receive takes the next signal of c into v without blocking; false when none
// could be decoded (the SDK drops an undecodable payload).
func (e *endpoint) receive(name string, c workflow.ReceiveChannel, v any) bool {
	if c.ReceiveAsync(v) {
		return true
	}
	workflow.GetLogger(e.ctx).Warn("endpoint_signal_malformed", "endpoint_id", e.in.EndpointID, "signal", name)
	return false
}

// evaluate reads the counters and applies the policy's decision.
func (e *endpoint) evaluate() {
	if e.in.State == policies.StateFrozen {
		return
	}
	res, err := e.snapshot()
	if err != nil {
		e.logf("endpoint_snapshot_failed", err)
		return
	}
	e.adoptState(res.Snapshot.State)
	if to, reason := e.health.Decide(res.Snapshot); to != e.in.State {
		e.change(to, reason, false)
	}
}

func (e *endpoint) gone(s HealthSignal) {
	if e.in.State != policies.StateEnabled {
		return
	}
	if _, err := e.snapshot(); err != nil {
		e.logf("endpoint_snapshot_failed", err)
	}
	if e.health.DisableOnGone {
		e.change(policies.StateDisabled, fmt.Sprintf("410 Gone from delivery %s", s.DeliveryID), false)
	}
}

func (e *endpoint) probeResult(r ProbeResult) {
	switch {
	case r.Success && e.in.State == policies.StateDisabled && !e.in.Manual:
		e.change(policies.StateEnabled, fmt.Sprintf("probe delivery %s succeeded (HTTP %d)", r.DeliveryID, r.StatusCode), true)
	case !r.Success:
		e.evaluate() // may freeze it
	}
}

var operatorReasons = map[string]string{
	SignalUnfreeze: "unfrozen by operator",
	SignalEnable:   "enabled by operator",
	SignalDisable:  "disabled by operator",
}

// operator applies an operator's unfreeze, enable or disable.
func (e *endpoint) operator(name, reason string) {
	if reason == "" {
		reason = operatorReasons[name]
	}
	switch {
	case name == SignalUnfreeze && e.in.State == policies.StateFrozen,
		name == SignalEnable && e.in.State != policies.StateEnabled:
		e.in.Manual = false
		e.change(policies.StateEnabled, reason, true)
	case name == SignalEnable && e.in.Manual:
		e.in.Manual = false
	case name == SignalDisable && e.in.State != policies.StateFrozen:
		e.in.Manual = true
		if e.in.State == policies.StateEnabled {
			e.change(policies.StateDisabled, reason, false)
		}
		e.armProbe()
	default:
		workflow.GetLogger(e.ctx).Info("endpoint_signal_ignored", "endpoint_id", e.in.EndpointID,
			"signal", name, "state", e.in.State)
	}
}

// change records the new state and acts on it: probes when disabled, release
// of the waiting deliveries when enabled. restart starts the counters afresh.
func (e *endpoint) change(to, reason string, restart bool) {
	from := e.in.State
	if to == from {
		return
	}
	at := workflow.Now(e.ctx)
	in := StateChangeInput{EndpointID: e.in.EndpointID, From: from, To: to, Reason: reason, At: at, Restart: restart}
	var res StateChangeResult
	if err := workflow.ExecuteActivity(e.bookkeeping(30*time.Second), ActivityRecordStateChange, in).Get(e.ctx, &res); err != nil {
		e.logf("endpoint_state_change_failed", err)
		return
	}
	if !res.Changed { // already recorded (a retried activity) or changed elsewhere
		e.resync()
		if e.in.State != to {
			return
		}
	}
	e.in.State, e.in.Reason, e.changedAt = to, reason, at
	e.in.NextProbeAt = time.Time{}
	e.upsert()
	e.armProbe()
	if to == policies.StateEnabled {
		e.releaseAll()
		e.release = workflow.NewTimer(e.ctx, releaseAgainAfter)
	}
}

// armProbe keeps one probe timer running while the endpoint is disabled (not
// by an operator) and none otherwise.
func (e *endpoint) armProbe() {
	want := e.in.State == policies.StateDisabled && !e.in.Manual && e.health.ProbeInterval > 0
	if !want {
		if e.cancelProbe != nil {
			e.cancelProbe()
		}
		e.probe, e.cancelProbe, e.in.NextProbeAt = nil, nil, time.Time{}
		return
	}
	if e.probe != nil {
		return
	}
	now := workflow.Now(e.ctx)
	if e.in.NextProbeAt.IsZero() {
		e.in.NextProbeAt = now.Add(e.health.ProbeInterval)
	}
	ctx, cancel := workflow.WithCancel(e.ctx)
	e.probe, e.cancelProbe = workflow.NewTimer(ctx, max(e.in.NextProbeAt.Sub(now), 0)), cancel
}

// probeOnce signals "probe" to the oldest waiting delivery that takes it.
func (e *endpoint) probeOnce() {
	if e.in.State != policies.StateDisabled || e.in.Manual {
		return
	}
	in := PickProbeInput{EndpointID: e.in.EndpointID, Limit: probeCandidates}
	var res PickProbeResult
	if err := workflow.ExecuteActivity(e.bookkeeping(30*time.Second), ActivityPickProbe, in).Get(e.ctx, &res); err != nil {
		e.logf("endpoint_pick_probe_failed", err)
		return
	}
	for _, id := range res.WorkflowIDs {
		err := workflow.SignalExternalWorkflow(e.ctx, id, "", SignalProbe, nil).Get(e.ctx, nil)
		if err == nil {
			e.lastProbe = id
			workflow.GetLogger(e.ctx).Info("endpoint_probe_sent", "endpoint_id", e.in.EndpointID, "workflow_id", id)
			return
		}
	}
}

// releaseAll signals "release" to every waiting delivery of the endpoint.
func (e *endpoint) releaseAll() {
	in := ReleaseInput{EndpointID: e.in.EndpointID}
	var res ReleaseResult
	if err := workflow.ExecuteActivity(e.bookkeeping(10*time.Minute), ActivityReleaseWaiting, in).Get(e.ctx, &res); err != nil {
		e.logf("endpoint_release_failed", err)
		return
	}
	workflow.GetLogger(e.ctx).Info("endpoint_released", "endpoint_id", e.in.EndpointID, "released", res.Released)
}

// resync takes the state recorded in the store.
func (e *endpoint) resync() {
	res, err := e.snapshot()
	if err != nil {
		e.logf("endpoint_snapshot_failed", err)
		return
	}
	e.adoptState(res.Snapshot.State)
}

// adoptState takes a state found in the store (changed outside this workflow).
func (e *endpoint) adoptState(state string) {
	if state == e.in.State {
		return
	}
	e.in.State, e.changedAt = state, workflow.Now(e.ctx)
	e.upsert()
	e.armProbe()
}
