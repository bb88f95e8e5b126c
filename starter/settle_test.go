package starter_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// stand-in Delivery workflows with the ids of real deliveries: one that
// completed as delivered (its attempt's outcome was never written), one
// still running.
func deliveredFlow(workflow.Context) (workflows.DeliveryResult, error) {
	return workflows.DeliveryResult{Status: policies.StatusDelivered, Attempts: 1, StatusCode: 201, DurationMs: 4.5}, nil
}

func runningFlow(ctx workflow.Context) (workflows.DeliveryResult, error) {
	workflow.GetSignalChannel(ctx, "stop").Receive(ctx, nil)
	return workflows.DeliveryResult{}, nil
}

// openFirstAttempt publishes an event to the subscription of type typ and
// opens its first attempt's row as if its request went out at startedAt.
func openFirstAttempt(t *testing.T, st *store.Store, id, typ string, startedAt time.Time) store.Delivery {
	t.Helper()
	d := publishType(t, st, id, typ)
	a := store.Attempt{DeliveryID: d.ID, Attempt: 0, ScheduledAt: startedAt, StartedAt: startedAt}
	if _, err := st.BeginAttempts(context.Background(), []store.Attempt{a}); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSettleOpenRecordsDeliveredOutcome: an attempt left open by a worker
// that stopped before writing its outcome (activities.Later) is recorded,
// once it is older than the age, from its workflow's result: success, the
// status code and duration the result states, the delivery delivered. An
// attempt whose workflow still runs, one with no workflow and a young one
// stay open.
func TestSettleOpenRecordsDeliveredOutcome(t *testing.T) {
	t.Parallel()
	ctx, st, c := context.Background(), testenv.Store(t), testenv.Client(t)
	putWorkfront(t, st, "settle", "s")
	old := time.Now().Add(-2 * time.Minute)
	lost := openFirstAttempt(t, st, "lost", "s", old)
	running := openFirstAttempt(t, st, "running", "s", old)
	orphan := openFirstAttempt(t, st, "orphan", "s", old)
	young := openFirstAttempt(t, st, "young", "s", time.Now())
	queue := testenv.QueuePrefix(t) + "-settle"
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(deliveredFlow, workflow.RegisterOptions{Name: "SettleDelivered"})
	w.RegisterWorkflowWithOptions(runningFlow, workflow.RegisterOptions{Name: "SettleRunning"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	startFlow(t, c, lost.WorkflowID, queue, "SettleDelivered", true)
	startFlow(t, c, young.WorkflowID, queue, "SettleDelivered", true)
	startFlow(t, c, running.WorkflowID, queue, "SettleRunning", false)
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), running.WorkflowID, "", "test ended") })

	s := testenv.Starter(t, c, st)
	if err := s.SettleOpen(ctx, starter.SettleAge); err != nil {
		t.Fatal(err)
	}
	if d := delivery(t, st, lost.ID); d.Status != policies.StatusDelivered {
		t.Errorf("lost outcome's delivery: %s, want delivered", d.Status)
	}
	as, err := st.Attempts(ctx, lost.ID)
	if err != nil || len(as) != 1 || !as[0].Success || as[0].StatusCode != 201 || as[0].DurationMs != 4.5 || as[0].ErrorKind != "" {
		t.Errorf("lost outcome's attempt: %+v %v", as, err)
	}
	for _, d := range []store.Delivery{running, orphan, young} {
		as, err := st.Attempts(ctx, d.ID)
		if err != nil || len(as) != 1 || as[0].ErrorKind != store.KindInFlight {
			t.Errorf("%s: attempts %+v %v, want one still in flight", d.ID, as, err)
		}
		if got := delivery(t, st, d.ID); got.Status == policies.StatusDelivered {
			t.Errorf("%s: delivered", d.ID)
		}
	}
}

// startFlow starts the stand-in workflow typ under id, waiting for its end
// when wait.
func startFlow(t *testing.T, c client.Client, id, queue, typ string, wait bool) {
	t.Helper()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: queue}, typ)
	if err != nil {
		t.Fatal(err)
	}
	if wait {
		if err := run.Get(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}
