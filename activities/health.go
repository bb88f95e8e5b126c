package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// The endpoint workflow (workflows.Endpoint), named here so that the Deliver
// activity can signal it: one per endpoint, with id "endpoint/<endpoint id>",
// on the main task queue (workflows.TaskQueue).
const (
	EndpointWorkflowType = "Endpoint"
	EndpointTaskQueue    = "hookrelay"
)

// Signals the endpoint workflow understands. Evaluate, gone and probe_result
// come from the Deliver activity; unfreeze, disable and enable from operators
// (the API, or `temporal workflow signal --name unfreeze`).
const (
	SignalEvaluate    = "evaluate"
	SignalGone        = "gone"
	SignalProbeResult = "probe_result"
	SignalUnfreeze    = "unfreeze"
	SignalDisable     = "disable"
	SignalEnable      = "enable"
)

// SignalDeliveryRelease is the Delivery workflow's "release" signal
// (workflows.SignalRelease), which ReleaseWaiting sends.
const SignalDeliveryRelease = "release"

// EndpointWorkflowID is the id of the endpoint's workflow.
func EndpointWorkflowID(endpointID string) string { return "endpoint/" + endpointID }

// EndpointInput is the input of the endpoint workflow; continue-as-new carries
// its state over in the same struct.
type EndpointInput struct {
	EndpointID string
	// Health is the policy's thresholds; the endpoint's own overrides, stored
	// with it, are applied on top at every evaluation.
	Health policies.Health
	// State is the state the previous run ended in; empty on the first run,
	// which reads it from the store.
	State  string
	Reason string
	// Manual is true when an operator disabled the endpoint: no probes then.
	Manual bool
	// NextProbeAt is when the previous run's next probe was due.
	NextProbeAt time.Time
	// MaxSignalsPerRun bounds the signals one run handles before it continues
	// as new; zero means the default.
	MaxSignalsPerRun int
}

// HealthSignal is the payload of evaluate and gone: the thresholds of the
// policy of the delivery that saw the crossing.
type HealthSignal struct {
	Health     policies.Health
	DeliveryID string
	StatusCode int
}

// ProbeResult is the payload of probe_result: how a probe attempt went (or a
// success seen while the endpoint was disabled).
type ProbeResult struct {
	DeliveryID string
	Success    bool
	StatusCode int
	Health     policies.Health
}

// OperatorSignal is the optional payload of unfreeze, disable and enable.
type OperatorSignal struct {
	Reason string `json:"reason"`
}

// EndpointOptions are the options the endpoint workflow is started with.
func EndpointOptions(endpointID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: EndpointWorkflowID(endpointID), TaskQueue: EndpointTaskQueue}
}

// SnapshotInput is the input of EndpointSnapshot.
type SnapshotInput struct {
	EndpointID string
	Health     policies.Health
}

// SnapshotResult is the endpoint's counters and its effective thresholds.
type SnapshotResult struct {
	Snapshot policies.Snapshot
	Health   policies.Health
}

// EndpointSnapshot reads the endpoint's state and counters, with the sums of
// its sliding window, and its thresholds: in.Health with the endpoint's own
// overrides applied.
func (a *Activities) EndpointSnapshot(ctx context.Context, in SnapshotInput) (SnapshotResult, error) {
	now := time.Now()
	h, err := a.healthCounts(ctx, in.EndpointID, in.Health, now)
	if err != nil {
		return SnapshotResult{}, err
	}
	return h, nil
}

func (a *Activities) healthCounts(ctx context.Context, id string, h policies.Health, now time.Time) (SnapshotResult, error) {
	c, err := a.Store.EndpointHealth(ctx, id, h.Window, now)
	if err != nil {
		return SnapshotResult{}, err
	}
	eff, err := endpointHealth(h, c.Health)
	if err != nil {
		return SnapshotResult{}, err
	}
	if eff.Window != h.Window {
		if c, err = a.Store.EndpointHealth(ctx, id, eff.Window, now); err != nil {
			return SnapshotResult{}, err
		}
	}
	return SnapshotResult{Health: eff, Snapshot: policies.Snapshot{
		State: c.State, WindowAttempts: c.WindowAttempts, WindowFailures: c.WindowFailures,
		Consecutive: c.Consecutive, LastSuccessAt: c.LastSuccessAt, Now: now,
	}}, nil
}

// endpointHealth applies an endpoint's stored overrides to h.
func endpointHealth(h policies.Health, raw store.RawJSON) (policies.Health, error) {
	if len(raw) == 0 || string(raw) == "{}" || string(raw) == "null" {
		return h, nil
	}
	var o policies.HealthOverrides
	if err := json.Unmarshal(raw, &o); err != nil {
		return h, fmt.Errorf("activities: endpoint health: %w", err)
	}
	return o.Apply(h, "health.")
}

// StateChangeInput is the input of RecordStateChange.
type StateChangeInput struct {
	EndpointID string
	From, To   string
	Reason     string
	At         time.Time
	Restart    bool
}

// StateChangeResult is the result of RecordStateChange.
type StateChangeResult struct {
	Changed bool
}

// RecordStateChange sets the endpoint's state and records why, in one
// transaction; re-enabling restarts its counters.
func (a *Activities) RecordStateChange(ctx context.Context, in StateChangeInput) (StateChangeResult, error) {
	changed, err := a.Store.ChangeEndpointState(ctx, store.ChangeState{
		EndpointID: in.EndpointID, From: in.From, To: in.To, Reason: in.Reason, At: in.At, Restart: in.Restart,
	})
	if err != nil {
		return StateChangeResult{}, err
	}
	a.Logger.InfoContext(ctx, "endpoint_state_changed", "endpoint_id", in.EndpointID,
		"from", in.From, "to", in.To, "reason", in.Reason, "changed", changed)
	return StateChangeResult{Changed: changed}, nil
}

// PickProbeInput is the input of PickProbe.
type PickProbeInput struct {
	EndpointID string
	Limit      int
}

// PickProbeResult lists the workflow ids of the oldest waiting deliveries.
type PickProbeResult struct {
	WorkflowIDs []string
}

// PickProbe returns the workflow ids of the endpoint's oldest waiting
// deliveries, the candidates for the next probe.
func (a *Activities) PickProbe(ctx context.Context, in PickProbeInput) (PickProbeResult, error) {
	ws, err := a.Store.WaitingDeliveries(ctx, in.EndpointID, store.Waiting{}, max(in.Limit, 1))
	if err != nil {
		return PickProbeResult{}, err
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.WorkflowID
	}
	return PickProbeResult{WorkflowIDs: ids}, nil
}

// ReleaseInput is the input of ReleaseWaiting.
type ReleaseInput struct {
	EndpointID string
}

// ReleaseResult counts the deliveries released.
type ReleaseResult struct {
	Released int
}

// ReleaseWaiting signals "release" to the workflow of every waiting delivery
// of the endpoint, page by page, heartbeating its progress.
func (a *Activities) ReleaseWaiting(ctx context.Context, in ReleaseInput) (ReleaseResult, error) {
	if a.Temporal == nil {
		return ReleaseResult{}, errors.New("activities: ReleaseWaiting needs a Temporal client")
	}
	var after store.Waiting
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &after)
	}
	n := 0
	for {
		ws, err := a.Store.WaitingDeliveries(ctx, in.EndpointID, after, 500)
		if err != nil || len(ws) == 0 {
			return ReleaseResult{Released: n}, err
		}
		for _, w := range ws {
			err := a.Temporal.SignalWorkflow(ctx, w.WorkflowID, "", SignalDeliveryRelease, nil)
			var nf *serviceerror.NotFound
			if err != nil && !errors.As(err, &nf) {
				return ReleaseResult{Released: n}, fmt.Errorf("activities: release %s: %w", w.WorkflowID, err)
			}
			if err == nil {
				n++
			}
		}
		after = ws[len(ws)-1]
		activity.RecordHeartbeat(ctx, after)
	}
}
