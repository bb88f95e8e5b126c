package starter_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// describes is the test's Temporal client, noting each workflow described.
type describes struct {
	client.Client
	mu  sync.Mutex
	ids []string
}

func (d *describes) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d.mu.Lock()
	d.ids = append(d.ids, id)
	d.mu.Unlock()
	return d.Client.DescribeWorkflowExecution(ctx, id, runID)
}

// TestSweepReconcilesFromVisibility: the sweeper asks Temporal's visibility
// for the workflows of the deliveries in flight and describes only those
// it shows closed or does not show (a sweep's describes of running
// workflows loaded Temporal, issue 51): a delivery whose workflow was
// terminated ends dead-lettered, one whose workflow is gone has it started
// again, and those whose workflows run are left to them, undescribed.
func TestSweepReconcilesFromVisibility(t *testing.T) {
	t.Parallel()
	ctx, st, c := context.Background(), testenv.Store(t), testenv.Client(t)
	putWorkfront(t, st, "listed", "r")
	queue := testenv.QueuePrefix(t) + "-listed" // no worker: its workflows stay running
	ds := map[string]store.Delivery{}
	for _, id := range []string{"run0", "run1", "term", "gone"} {
		d := publishType(t, st, id, "r")
		ds[id] = d
		t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), d.WorkflowID, "", "test ended") })
		if id != "gone" {
			startFlow(t, c, d.WorkflowID, queue, "Idle", false)
		}
	}
	if err := c.TerminateWorkflow(ctx, ds["term"].WorkflowID, "", "by the test"); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkStarted(ctx, []string{ds["run0"].ID, ds["run1"].ID, ds["term"].ID, ds["gone"].ID}); err != nil {
		t.Fatal(err)
	}
	testenv.AwaitListed(t, c, `WorkflowId IN ('`+ds["run0"].WorkflowID+`', '`+ds["run1"].WorkflowID+
		`') OR (WorkflowId = '`+ds["term"].WorkflowID+`' AND ExecutionStatus = 'Terminated')`,
		func(runs []*workflowpb.WorkflowExecutionInfo) bool { return len(runs) == 3 })

	rec := &describes{Client: c}
	if err := testenv.Starter(t, rec, st).ReconcileListed(ctx, 0); err != nil {
		t.Fatal(err)
	}
	want := []string{ds["gone"].WorkflowID, ds["term"].WorkflowID}
	slices.Sort(rec.ids)
	slices.Sort(want)
	if !slices.Equal(rec.ids, want) {
		t.Errorf("described %v, want only the closed and the missing workflows %v", rec.ids, want)
	}
	if d := delivery(t, st, ds["term"].ID); d.Status != policies.StatusDeadLettered || !strings.HasPrefix(d.FinalReason, starter.ReasonTerminated) {
		t.Errorf("terminated workflow's delivery: %s %q, want dead-lettered, %q", d.Status, d.FinalReason, starter.ReasonTerminated)
	}
	if _, err := c.DescribeWorkflowExecution(ctx, ds["gone"].WorkflowID, ""); err != nil {
		t.Errorf("the missing workflow was not started again: %v", err)
	}
	for _, id := range []string{"run0", "run1", "gone"} {
		if d := delivery(t, st, ds[id].ID); d.Status == policies.StatusDeadLettered {
			t.Errorf("%s ended: %s", id, d.FinalReason)
		}
	}
}
