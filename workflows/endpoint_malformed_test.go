package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestEndpointMalformedSignalIgnored: an operator's "disable" whose payload is
// a JSON string (not the object expected, as `temporal workflow signal --input
// '"maintenance"'` sends it) is ignored; the workflow still probes every 10
// minutes and obeys the valid "enable" sent after it.
func TestEndpointMalformedSignalIgnored(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/malformed")
	ctx := context.Background()
	pub, err := f.st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: epEventType, Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	waiting := pub.Deliveries[0].WorkflowID
	if err := f.st.SetInFlight(ctx, pub.Deliveries[0].ID, "waiting", nil); err != nil {
		t.Fatal(err)
	}
	f.counters(t, policies.StateDisabled, 0, 0, 2000, time.Hour)
	f.acts.Temporal = testenv.Client(t) // the release after "enable"
	env := f.env()
	probes := 0
	env.OnSignalExternalWorkflow(mock.Anything, waiting, "", workflows.SignalProbe, mock.Anything).Return(nil).
		Run(func(mock.Arguments) { probes++ })
	var before, after workflows.EndpointStatus
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalDisable, "maintenance") }, time.Second)
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		after = queryState(t, env)
		env.SignalWorkflow(workflows.SignalEnable, workflows.OperatorSignal{Reason: "maintenance over"})
	}, 21*time.Minute)
	env.RegisterDelayedCallback(env.CancelWorkflow, 22*time.Minute)
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	if before.State != policies.StateDisabled || before.Manual || before.NextProbeAt.IsZero() {
		t.Fatalf("after the malformed disable: %+v", before)
	}
	if probes != 2 || after.State != policies.StateDisabled || !after.NextProbeAt.After(before.NextProbeAt) {
		t.Fatalf("%d probes (want 2), status %+v (before %+v)", probes, after, before)
	}
	got, changes := f.state(t)
	if got != policies.StateEnabled || len(changes) != 1 || changes[0].Reason != "maintenance over" {
		t.Fatalf("state %s, changes %+v", got, changes)
	}
}

// TestEndpointMalformedSignalDrained: a malformed signal still buffered when
// the run continues as new is dropped by the drain, which does not hang.
func TestEndpointMalformedSignalDrained(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/malformed-drain")
	env := f.env()
	env.RegisterDelayedCallback(func() {
		// The disable is handled first; the evaluate arrives while its
		// state change is recorded and is still buffered for the drain.
		env.SignalWorkflow(workflows.SignalDisable, workflows.OperatorSignal{Reason: "maintenance"})
		env.SignalWorkflow(workflows.SignalEvaluate, "not an object")
	}, time.Second)
	in := f.input()
	in.MaxSignalsPerRun = 1
	env.ExecuteWorkflow(workflows.Endpoint, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	var next workflows.EndpointInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if next.State != policies.StateDisabled || !next.Manual || next.Reason != "maintenance" {
		t.Fatalf("continued with %+v", next)
	}
}

// TestEndpointSurvivesRefusedBookkeeping: issue 10. A disable whose reason
// PostgreSQL refuses (a NUL byte, sent straight to the workflow, past the
// API's check) fails its state change once, not forever: a clean disable
// and an enable after it are recorded.
func TestEndpointSurvivesRefusedBookkeeping(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/refused")
	env := f.env()
	var between workflows.EndpointStatus
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalDisable, workflows.OperatorSignal{Reason: "b\x00"})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalDisable, workflows.OperatorSignal{Reason: "maintenance"})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		between = queryState(t, env)
		env.SignalWorkflow(workflows.SignalEnable, workflows.OperatorSignal{Reason: "maintenance over"})
	}, 3*time.Minute)
	env.RegisterDelayedCallback(env.CancelWorkflow, 4*time.Minute)
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	if between.State != policies.StateDisabled {
		t.Fatalf("after the clean disable: %+v", between)
	}
	got, changes := f.state(t)
	if got != policies.StateEnabled || len(changes) != 2 || changes[0].Reason != "maintenance" || changes[1].Reason != "maintenance over" {
		t.Fatalf("state %s, changes %+v", got, changes)
	}
}
