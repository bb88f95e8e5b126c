package starter_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func putEG(t *testing.T, st *store.Store, name, typ string, eg eventgrid.Settings) store.Subscription {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://127.0.0.1:1/" + name,
		EventTypes: []string{typ}, Policy: "eventgrid", Active: true, Options: eventgrid.Options(eg)}
	if _, err := st.PutSubscriptionByName(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

// putWorkfront stores the workfront subscription name to events of type
// typ, its receiver an address nothing listens on.
func putWorkfront(t *testing.T, st *store.Store, name, typ string) {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://127.0.0.1:1/" + name,
		EventTypes: []string{typ}, Policy: "workfront", Active: true}
	if _, err := st.PutSubscriptionByName(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
}

func publishType(t *testing.T, st *store.Store, id, typ string) store.Delivery {
	t.Helper()
	res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, ExternalID: id, Type: typ})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish %s: %+v %v", id, res, err)
	}
	return res.Deliveries[0]
}

func delivery(t *testing.T, st *store.Store, id string) store.Delivery {
	t.Helper()
	d, err := st.GetDelivery(context.Background(), store.DefaultAccount, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSweepDropsAwaitingDeliveries: deliveries of a subscription awaiting its
// handshake are dropped once older than the policy's time to live (the
// eventgrid policy's 24 hours), and at once after the handshake failed;
// younger ones keep waiting.
func TestSweepDropsAwaitingDeliveries(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	pending := eventgrid.Settings{Mode: eventgrid.ModeCloud, Validation: eventgrid.ValidationPending, ValidationCode: "c"}
	failed := eventgrid.Settings{Mode: eventgrid.ModeCloud, Validation: eventgrid.ValidationFailed, ValidationCode: "c"}
	putEG(t, st, "pending", "p", pending)
	putEG(t, st, "failed", "f", failed)
	old, young := publishType(t, st, "e1", "p"), publishType(t, st, "e2", "p")
	late := publishType(t, st, "e3", "f")
	if _, err := st.DB().ExecContext(ctx, `UPDATE deliveries SET created_at = now() - interval '25 hours'
		WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	s := testenv.Starter(t, testenv.Client(t), st)
	if err := s.SweepOnce(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if d := delivery(t, st, old.ID); d.Status != policies.StatusDropped || d.FinalReason != store.ReasonTTLAwaitingValidation {
		t.Errorf("expired delivery: %s %q", d.Status, d.FinalReason)
	}
	if d := delivery(t, st, young.ID); d.Status != "pending" || d.Started {
		t.Errorf("young delivery: %s started=%v, want pending and unstarted", d.Status, d.Started)
	}
	if d := delivery(t, st, late.ID); d.Status != policies.StatusDropped || d.FinalReason != store.ReasonValidationFailed {
		t.Errorf("delivery of a failed subscription: %s %q", d.Status, d.FinalReason)
	}
}

// TestSweepStartsStrandedBatch: a claimed batch whose Batch workflow was
// never started gets one, with the Batcher's id and input.
func TestSweepStartsStrandedBatch(t *testing.T) {
	t.Parallel()
	ctx, st, c := context.Background(), testenv.Store(t), testenv.Client(t)
	batching := eventgrid.Settings{Mode: eventgrid.ModeEdge, Validation: eventgrid.ValidationNone, MaxEventsPerBatch: 2}
	sub := putEG(t, st, "batching", "b", batching)
	publishType(t, st, "e1", "b")
	batchID := store.NewID("batch")
	b, err := st.ClaimBatch(ctx, store.BatchClaim{SubscriptionID: sub.ID, ID: batchID, MaxEvents: 2})
	if err != nil || len(b.DeliveryIDs) != 1 {
		t.Fatalf("claim: %+v %v", b, err)
	}
	wid := workflows.BatchWorkflowID(batchID)
	if _, err := c.DescribeWorkflowExecution(ctx, wid, ""); err == nil {
		t.Fatal("the batch's workflow exists before the sweep")
	}
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), wid, "", "test ended") })
	s := testenv.Starter(t, c, st)
	s.BatchGrace = time.Nanosecond
	if err := s.SweepOnce(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatalf("after the sweep: %v", err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != "Batch" || info.GetTaskQueue() != s.Queues.Main {
		t.Fatalf("started %s on %s", info.GetType().GetName(), info.GetTaskQueue())
	}
	if err := s.SweepOnce(ctx, time.Hour); err != nil {
		t.Fatalf("second sweep (workflow exists): %v", err)
	}
	desc2, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil || desc2.GetWorkflowExecutionInfo().GetExecution().GetRunId() != info.GetExecution().GetRunId() {
		t.Fatalf("second sweep started another run: %v", err)
	}
}
