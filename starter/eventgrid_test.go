package starter_test

import (
	"context"
	"testing"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestStartLooksAgainAtAwaiting: a delivery whose publication matched its
// Event Grid subscription while the handshake was pending, and that
// committed after the handshake succeeded (so that startWaiting never saw
// it), is started when its publisher hands it over, not left to the sweeper.
func TestStartLooksAgainAtAwaiting(t *testing.T) {
	t.Parallel()
	ctx, st, c := context.Background(), testenv.Store(t), testenv.Client(t)
	pending := eventgrid.Settings{Mode: eventgrid.ModeCloud, Validation: eventgrid.ValidationPending, ValidationCode: "c"}
	sub := putEG(t, st, "raced", "raced", pending)
	d := publishType(t, st, "r1", "raced")
	if d.Subscription == nil || !eventgrid.Of(d.Subscription.Options).Awaiting() {
		t.Fatalf("the publication matched %+v, want the subscription awaiting its handshake", d.Subscription)
	}
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), d.WorkflowID, "", "test ended") })
	if ok, err := st.SetEventGridValidation(ctx, sub.ID, "c", eventgrid.ValidationSucceeded); err != nil || !ok {
		t.Fatalf("validation succeeded: %v %v", ok, err)
	}
	if err := testenv.Starter(t, c, st).Start(ctx, []store.Delivery{d}); err != nil {
		t.Fatal(err)
	}
	if !delivery(t, st, d.ID).Started {
		t.Fatal("the delivery was left unstarted")
	}
	if _, err := c.DescribeWorkflowExecution(ctx, d.WorkflowID, ""); err != nil {
		t.Errorf("workflow %s: %v", d.WorkflowID, err)
	}
}
