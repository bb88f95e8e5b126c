package tracing_test

import (
	"os"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	historypb "go.temporal.io/api/history/v1"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/workflows"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// replayers are a worker's workflow replayers with tracing off and on.
func replayers(t *testing.T, tr *tracing.Tracing) map[string]sdkworker.WorkflowReplayer {
	t.Helper()
	traced, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{Interceptors: tr.Interceptors()})
	if err != nil {
		t.Fatal(err)
	}
	rs := map[string]sdkworker.WorkflowReplayer{"untraced": sdkworker.NewWorkflowReplayer(), "traced": traced}
	for _, r := range rs {
		r.RegisterWorkflowWithOptions(workflows.Delivery, workflow.RegisterOptions{Name: "Delivery"})
		r.RegisterWorkflowWithOptions(workflows.Sequencer, workflow.RegisterOptions{Name: "Sequencer"})
		r.RegisterWorkflowWithOptions(workflows.DeadLetterBlob, workflow.RegisterOptions{Name: workflows.DeadLetterBlobWorkflowType})
	}
	return rs
}

// replay replays the history of a traced delivery's workflow by workers with
// tracing on and off: tracing changes headers, not commands, so either
// kind of worker may take over a workflow the other ran.
func replay(t *testing.T, hist *historypb.History, tr *tracing.Tracing) {
	t.Helper()
	for name, r := range replayers(t, tr) {
		if err := r.ReplayWorkflowHistory(sdklog.NewStructuredLogger(testenv.Logger()), hist); err != nil {
			t.Errorf("replayed %s: %v", name, err)
		}
	}
}

// activityKinds counts a history's local activities (their markers) and the
// regular Deliver activities it scheduled.
func activityKinds(hist *historypb.History) (local, deliver int) {
	for _, e := range hist.Events {
		if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
			local++
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Deliver" {
			deliver++
		}
	}
	return local, deliver
}

// TestRecordedHistoriesReplayTraced: the Delivery, Sequencer and DeadLetterBlob histories
// recorded in workflows/testdata (untraced) replay by a worker that traces.
func TestRecordedHistoriesReplayTraced(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../workflows/testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories (%v)", err)
	}
	tr, err := tracing.New(sdktrace.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	r := replayers(t, tr)["traced"]
	for _, file := range files {
		if err := r.ReplayWorkflowHistoryFromJSONFile(sdklog.NewStructuredLogger(testenv.Logger()), file); err != nil {
			t.Errorf("%s: %v", filepath.Base(file), err)
		}
	}
}
