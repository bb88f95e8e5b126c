package workflows_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// historiesDir holds recorded Delivery histories, in the JSON of
// `temporal workflow show --output json`.
const historiesDir = "testdata/histories"

// recording is one Delivery recorded on the dev server: its policy, retry
// policy, receiver script and the status it must end with. endpoint, when
// set, is the endpoint's state at the start; signal is then sent once the
// delivery waits (after re-enabling the endpoint for a release). held, when
// set, is how long another attempt holds the endpoint's only slot.
type recording struct {
	name, policy, retryPolicy string
	script                    func(int) int
	status                    policies.Status
	endpoint, signal          string
	held                      time.Duration
}

var recordings = []recording{
	{name: "workfront-delivered", policy: policies.NameWorkfront, script: always(http.StatusOK), status: "delivered"},
	{name: "workfront-legacy-dead-lettered", policy: policies.NameWorkfrontLegacy, retryPolicy: `{"max_attempts": 1}`,
		script: always(http.StatusInternalServerError), status: "dead_lettered"},
	{name: "sap-retry-delivered", policy: policies.NameSAP, script: failFirst(1, http.StatusServiceUnavailable), status: "delivered"},
	{name: "sap-exhausted-queued", policy: policies.NameSAP, retryPolicy: `{"max_attempts": 2}`,
		script: always(http.StatusServiceUnavailable), status: "queued"},
	{name: "eventgrid-400-dead-lettered", policy: policies.NameEventGrid, retryPolicy: `{"dead_lettering": true}`,
		script: always(http.StatusBadRequest), status: "dead_lettered"},
	{name: "eventgrid-retry-delivered", policy: policies.NameEventGrid, script: failFirst(1, http.StatusInternalServerError), status: "delivered"},
	{name: "eventgrid-edge-ttl-dead-lettered", policy: policies.NameEventGridEdge, retryPolicy: `{"ttl_seconds": 60}`,
		script: always(http.StatusInternalServerError), status: "dead_lettered"},
	{name: "custom-gaps-delivered", policy: policies.NameCustom, retryPolicy: `{"custom": {"kind": "gaps", "seconds": [1, 2]}}`,
		script: failFirst(2, http.StatusServiceUnavailable), status: "delivered"},
	{name: "custom-exponential-dropped", policy: policies.NameCustom,
		retryPolicy: `{"custom": {"kind": "exponential", "base_seconds": 0.5, "factor": 2}, "max_attempts": 3,
			"jitter_fraction": 0.2, "on_exhausted": "drop", "dead_lettering": false}`,
		script: always(http.StatusBadGateway), status: "dropped"},
	{name: "workfront-waiting-released", policy: policies.NameWorkfront, script: always(http.StatusOK), status: "delivered",
		endpoint: "disabled", signal: workflows.SignalRelease},
	{name: "workfront-waiting-probe", policy: policies.NameWorkfront, script: always(http.StatusOK), status: "delivered",
		endpoint: "disabled", signal: workflows.SignalProbe},
	{name: "custom-retry-after-delivered", policy: policies.NameCustom, retryPolicy: `{"custom": {"kind": "fixed", "interval_seconds": 1}}`,
		script: failFirst(1, http.StatusTooManyRequests), status: "delivered"},
	{name: "custom-held-back-delivered", policy: policies.NameCustom, retryPolicy: `{"custom": {"kind": "fixed", "interval_seconds": 1}}`,
		script: always(http.StatusOK), status: "delivered", held: 2 * time.Second},
	// Issue 53 (Delivery version 7): a Retry-After moves the later slots of
	// an offset schedule; a delivery held back before its first attempt
	// keeps the window of its publication, its last slot made at the
	// window's end.
	{name: "custom-offsets-retry-after-delivered", policy: policies.NameCustom,
		retryPolicy: `{"custom": {"kind": "offsets", "seconds": [1, 5, 6]}}`,
		script:      scripted(http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusOK), status: "delivered"},
	{name: "custom-offsets-window-dead-lettered", policy: policies.NameCustom,
		retryPolicy: `{"custom": {"kind": "offsets", "seconds": [1, 2, 20]}}`,
		script:      always(http.StatusInternalServerError), status: "dead_lettered", endpoint: "disabled", signal: workflows.SignalRelease},
}

// scripted answers codes[n] to the n-th request, and the last code after.
func scripted(codes ...int) func(int) int {
	return func(n int) int { return codes[min(n, len(codes)-1)] }
}

// TestRecordHistories runs one Delivery per recording on the real dev server
// with a real worker, store and receiver, and writes each history to
// testdata/histories for TestReplayRecordedHistories. It runs only with
// HOOKRELAY_RECORD_HISTORIES=1; record again after a deliberate change of the
// workflow's commands (and version that change).
func TestRecordHistories(t *testing.T) {
	t.Parallel()
	if os.Getenv("HOOKRELAY_RECORD_HISTORIES") != "1" {
		t.Skip("set HOOKRELAY_RECORD_HISTORIES=1 to record Delivery histories")
	}
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := startWorkers(t, c, st)
	fs := make([]*fixture, len(recordings))
	for i, r := range recordings {
		fs[i] = newFixtureOn(t, st, r.policy, r.retryPolicy, r.script)
		if r.endpoint != "" {
			fs[i].setEndpointState(t, r.endpoint)
		}
		if r.held > 0 {
			fs[i].holdSlot(t, r.held)
		}
		startDelivery(t, c, s, fs[i])
	}
	for i, r := range recordings {
		if r.signal != "" {
			signalWhenWaiting(t, c, fs[i], r.signal)
		}
	}
	if err := os.MkdirAll(historiesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, r := range recordings {
		res := awaitDelivery(t, c, fs[i], 2*time.Minute)
		if res.Status != r.status {
			t.Errorf("%s: status %q, want %q", r.name, res.Status, r.status)
			continue
		}
		writeHistory(t, c, fs[i].delivery.WorkflowID, filepath.Join(historiesDir, r.name+".json"))
	}
}

// signalWhenWaiting waits until f's delivery is waiting, re-enables its
// endpoint for a release, and sends signal.
func signalWhenWaiting(t *testing.T, c client.Client, f *fixture, signal string) {
	t.Helper()
	for i := 0; f.reload(t).Status != "waiting"; i++ {
		if i == 300 {
			t.Fatalf("%s never waited", f.delivery.ID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if signal == workflows.SignalRelease {
		f.setEndpointState(t, "enabled")
	}
	if err := c.SignalWorkflow(context.Background(), f.delivery.WorkflowID, "", signal, nil); err != nil {
		t.Fatal(err)
	}
}

// writeHistory fetches a closed workflow's history and writes it as JSON.
func writeHistory(t *testing.T, c client.Client, workflowID, path string) {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(testenv.History(t, c, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayRecordedHistories replays every recorded Delivery, Sequencer and
// DeadLetterBlob (recorded by eventgrid/deadletter_blob_test.go) history
// against the current workflow code: a change that alters the workflow's
// commands for a recorded history (non-determinism) fails here. It needs no
// server.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < len(recordings) {
		t.Fatalf("%d recorded histories in %s, want %d: run TestRecordHistories with HOOKRELAY_RECORD_HISTORIES=1",
			len(files), historiesDir, len(recordings))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			r := sdkworker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.Delivery, workflow.RegisterOptions{Name: "Delivery"})
			r.RegisterWorkflowWithOptions(workflows.Sequencer, workflow.RegisterOptions{Name: "Sequencer"})
			r.RegisterWorkflowWithOptions(workflows.DeadLetterBlob, workflow.RegisterOptions{Name: workflows.DeadLetterBlobWorkflowType})
			if err := r.ReplayWorkflowHistoryFromJSONFile(sdklog.NewStructuredLogger(testenv.Logger()), file); err != nil {
				t.Fatal(err)
			}
		})
	}
}
