package starter_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

func subscribe(t *testing.T, st *store.Store, typ string) {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/" + typ,
		EventTypes: []string{typ}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
}

// TestQueueStartsDeliveries: deliveries handed to a running Queue get their
// workflow started and are recorded as started, in the background.
func TestQueueStartsDeliveries(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	subscribe(t, st, "q")
	var ds []store.Delivery
	for _, id := range []string{"q1", "q2", "q3"} {
		ds = append(ds, publishType(t, st, id, "q"))
	}
	for _, d := range ds {
		t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), d.WorkflowID, "", "test ended") })
	}
	q := &starter.Queue{Starter: testenv.Starter(t, c, st), Workers: 2}
	ctx := runQueue(t, q)
	q.Enqueue(ctx, ds)
	for _, d := range ds {
		waitStarted(t, st, d.ID)
		if _, err := c.DescribeWorkflowExecution(ctx, d.WorkflowID, ""); err != nil {
			t.Errorf("%s: workflow %s: %v", d.ID, d.WorkflowID, err)
		}
	}
	if n := q.Len(); n != 0 {
		t.Errorf("queue holds %d after starting everything", n)
	}
}

// TestQueueFullLeavesToSweeper: a full queue takes no more (Enqueue never
// blocks); what it did not take stays unstarted in PostgreSQL, where the
// sweeper finds it. Started deliveries are not queued.
func TestQueueFullLeavesToSweeper(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	subscribe(t, st, "f")
	a, b := publishType(t, st, "f1", "f"), publishType(t, st, "f2", "f")
	done := publishType(t, st, "f3", "f")
	done.Started = true
	q := &starter.Queue{Starter: &starter.Starter{Store: st, Logger: testenv.Logger()}, Size: 1}
	q.Enqueue(ctx, []store.Delivery{done, a, b})
	if n := q.Len(); n != 1 {
		t.Fatalf("queue of size 1 holds %d", n)
	}
	ds, err := st.UnstartedDeliveries(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Errorf("%d unstarted deliveries for the sweeper, want 3 (nothing started yet)", len(ds))
	}
}

// TestQueueMarksStartsItMade: a delivery whose workflow exists but makes no
// attempt (here another's, on a queue no worker polls) is still recorded as
// started, by the marks the queue writes after its starts.
func TestQueueMarksStartsItMade(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	subscribe(t, st, "m")
	d := publishType(t, st, "m1", "m")
	opts := client.StartWorkflowOptions{ID: d.WorkflowID, TaskQueue: "nobody-polls-" + d.ID}
	if _, err := c.ExecuteWorkflow(context.Background(), opts, "Nothing"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), d.WorkflowID, "", "test ended") })
	q := &starter.Queue{Starter: testenv.Starter(t, c, st), Workers: 1}
	q.Enqueue(runQueue(t, q), []store.Delivery{d})
	waitStarted(t, st, d.ID)
}

// runQueue runs q until the test ends, and returns the context it runs
// under.
func runQueue(t *testing.T, q *starter.Queue) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ctx
}

// waitStarted waits, a minute at most, until delivery id is recorded as
// started.
func waitStarted(t *testing.T, st *store.Store, id string) {
	t.Helper()
	for i := 0; !delivery(t, st, id).Started; i++ {
		if i == 600 {
			t.Fatalf("%s not recorded as started after a minute", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestQueueLeasesWhatWaits: a delivery that has waited in the queue
// leaseAfter is leased from the sweeper, which does not get it while it
// waits (a troubled endpoint's paced starts hold deliveries for minutes);
// one queued later is not, nor one the queue never held; as the queue
// stops, its leases end and the sweeper gets what it held.
func TestQueueLeasesWhatWaits(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	subscribe(t, st, "l")
	held, other := publishType(t, st, "l1", "l"), publishType(t, st, "l2", "l")
	q := &starter.Queue{Starter: &starter.Starter{Store: st, Logger: testenv.Logger()}}
	q.Enqueue(ctx, []store.Delivery{held})
	q.Lease(ctx, time.Now())
	testenv.WantSwept(t, st, held.ID, other.ID)
	q.Lease(ctx, time.Now().Add(time.Minute))
	testenv.WantSwept(t, st, other.ID)
	q.EndLeases()
	testenv.WantSwept(t, st, held.ID, other.ID)
}
