package workflows

import (
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
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

// EndpointWorkflowType is the endpoint workflow's registered name; one runs
// per endpoint, with id EndpointWorkflowID.
const EndpointWorkflowType = "Endpoint"

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
func EndpointOptions(q Queues, endpointID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: EndpointWorkflowID(endpointID), TaskQueue: q.Main}
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

// PickProbeInput is the input of PickProbe.
type PickProbeInput struct {
	EndpointID string
	Limit      int
}

// PickProbeResult lists the workflow ids of the oldest waiting deliveries.
type PickProbeResult struct {
	WorkflowIDs []string
}

// ReleaseInput is the input of ReleaseWaiting.
type ReleaseInput struct {
	EndpointID string
}

// ReleaseResult counts the deliveries released.
type ReleaseResult struct {
	Released int
}
