package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// QueryState is the Endpoint workflow's query: it answers an EndpointStatus.
const QueryState = "state"

const (
	// defaultMaxSignalsPerRun bounds one run's history (a few events per
	// signal) well below Temporal's limits before it continues as new.
	defaultMaxSignalsPerRun = 500
	// releaseAgainAfter is when a re-enabled endpoint releases its waiting
	// deliveries a second time, for any that started waiting during the first.
	releaseAgainAfter = time.Minute
	// probeCandidates is how many of the oldest waiting deliveries a probe tries.
	probeCandidates = 5
)

// EndpointStatus is the answer to the "state" query.
type EndpointStatus struct {
	EndpointID  string          `json:"endpoint_id"`
	State       string          `json:"state"`
	Reason      string          `json:"reason"`
	ChangedAt   time.Time       `json:"changed_at"`
	Manual      bool            `json:"manual"`
	NextProbeAt time.Time       `json:"next_probe_at"`
	LastProbe   string          `json:"last_probe_workflow_id"`
	Health      policies.Health `json:"health"`
	Signals     int             `json:"signals_this_run"`
}

// Endpoint owns one endpoint's state (docs/policies.md#workfront-circuit-breaker):
// it decides on disabling and freezing when the Deliver activity signals that
// a threshold was crossed (the counting itself is done in PostgreSQL), probes a
// disabled endpoint with its oldest waiting delivery every ProbeInterval,
// re-enables it and releases its waiting deliveries when a probe succeeds, and
// obeys operators' unfreeze, disable and enable signals. Its id is
// "endpoint/<endpoint id>"; it continues as new to keep its history bounded.
func Endpoint(ctx workflow.Context, in EndpointInput) error {
	e := &endpoint{ctx: ctx, in: in, health: in.Health}
	return e.run()
}

type endpoint struct {
	ctx         workflow.Context
	in          EndpointInput
	health      policies.Health // the endpoint's rules, from its last snapshot
	changedAt   time.Time
	signals     int
	lastProbe   string
	probe       workflow.Future
	cancelProbe workflow.CancelFunc
	release     workflow.Future
}

// endpointSignals are the signals handled, in a fixed order (deterministic).
var endpointSignals = []string{
	SignalUnfreeze, SignalEnable, SignalDisable,
	SignalProbeResult, SignalGone, SignalEvaluate,
}

func (e *endpoint) run() error {
	if err := workflow.SetQueryHandler(e.ctx, QueryState, e.status); err != nil {
		return err
	}
	if err := e.load(); err != nil {
		return err
	}
	e.upsert()
	e.armProbe()
	for {
		if e.shouldContinue() {
			e.drain()
			if e.release != nil {
				e.releaseAll()
			}
			return workflow.NewContinueAsNewError(e.ctx, EndpointWorkflowType, e.in)
		}
		sel := workflow.NewSelector(e.ctx)
		for _, name := range endpointSignals {
			name := name
			sel.AddReceive(workflow.GetSignalChannel(e.ctx, name), func(c workflow.ReceiveChannel, _ bool) {
				e.handle(name, c)
			})
		}
		e.addTimers(sel)
		sel.AddReceive(e.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(e.ctx)
		if err := e.ctx.Err(); err != nil {
			return err
		}
	}
}

// load reads the state and thresholds from the store on a first run.
func (e *endpoint) load() error {
	res, err := e.snapshot()
	if err != nil {
		return err
	}
	if e.in.State == "" || e.in.State != res.Snapshot.State {
		e.in.State = res.Snapshot.State
	}
	e.changedAt = workflow.Now(e.ctx)
	return nil
}

func (e *endpoint) addTimers(sel workflow.Selector) {
	if e.probe != nil {
		sel.AddFuture(e.probe, func(workflow.Future) {
			e.probe = nil
			e.signals++
			e.probeOnce()
			e.in.NextProbeAt = time.Time{}
			e.armProbe()
		})
	}
	if e.release != nil {
		sel.AddFuture(e.release, func(workflow.Future) {
			e.release = nil
			if e.in.State == policies.StateEnabled {
				e.releaseAll()
			}
		})
	}
}

func (e *endpoint) shouldContinue() bool {
	limit := e.in.MaxSignalsPerRun
	if limit <= 0 {
		limit = defaultMaxSignalsPerRun
	}
	return e.signals >= limit || workflow.GetInfo(e.ctx).GetContinueAsNewSuggested()
}

// drain handles every signal already received, so none is lost when the run
// continues as new.
func (e *endpoint) drain() {
	for more := true; more; {
		more = false
		for _, name := range endpointSignals {
			c := workflow.GetSignalChannel(e.ctx, name)
			for c.Len() > 0 {
				e.handle(name, c)
				more = true
			}
		}
	}
}

func (e *endpoint) status() (EndpointStatus, error) {
	return EndpointStatus{
		EndpointID: e.in.EndpointID, State: e.in.State, Reason: e.in.Reason, ChangedAt: e.changedAt,
		Manual: e.in.Manual, NextProbeAt: e.in.NextProbeAt, LastProbe: e.lastProbe,
		Health: e.health, Signals: e.signals,
	}, nil
}

func (e *endpoint) upsert() {
	err := workflow.UpsertTypedSearchAttributes(e.ctx,
		AttrEndpointID.ValueSet(e.in.EndpointID), AttrEndpointState.ValueSet(e.in.State))
	if err != nil {
		workflow.GetLogger(e.ctx).Error("upsert_search_attributes_failed", "error", err)
	}
}

// bookkeeping is the context of the endpoint's activities, which Temporal
// retries until they succeed.
func (e *endpoint) bookkeeping(timeout time.Duration) workflow.Context {
	return workflow.WithActivityOptions(e.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
	})
}

func (e *endpoint) snapshot() (SnapshotResult, error) {
	in := SnapshotInput{EndpointID: e.in.EndpointID, Health: e.in.Health}
	var res SnapshotResult
	err := workflow.ExecuteActivity(e.bookkeeping(30*time.Second), ActivityEndpointSnapshot, in).Get(e.ctx, &res)
	if err == nil {
		e.health = res.Health
	}
	return res, err
}

// logf logs an unexpected failure of the endpoint's bookkeeping.
func (e *endpoint) logf(msg string, err error) {
	workflow.GetLogger(e.ctx).Error(msg, "endpoint_id", e.in.EndpointID, "error", fmt.Sprint(err))
}
