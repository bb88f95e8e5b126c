package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestRecordSequencerHistories runs two Sequencers on the real dev server
// with a real worker, store and receiver, until each ends idle, and writes
// their histories to testdata/histories for TestReplayRecordedHistories:
// three deliveries of one key, the first retried once (by the Delivery
// child the Sequencer handed it to after its own first attempt failed,
// whose history is written too); and two, the first skipped (its Delivery
// terminated and dead-lettered, as POST /v1/deliveries/{id}/skip does)
// while it retries. The v0- files are those of Sequencers from before
// changeSequencerFirstAttempt. It runs only with
// HOOKRELAY_RECORD_HISTORIES=1 (it waits out the Sequencers' idle minute).
func TestRecordSequencerHistories(t *testing.T) {
	t.Parallel()
	if os.Getenv("HOOKRELAY_RECORD_HISTORIES") != "1" {
		t.Skip("set HOOKRELAY_RECORD_HISTORIES=1 to record Sequencer histories")
	}
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := startWorkers(t, c, st)
	delivered := publishOrdered(t, c, s, st, failFirst(1, http.StatusServiceUnavailable), 3)
	var released atomic.Bool
	skipped := publishOrdered(t, c, s, st, func(int) int {
		if !released.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, 2)
	waitStatus(t, st, skipped[0], policies.StatusRetrying)
	released.Store(true)
	if err := c.TerminateWorkflow(context.Background(), skipped[0].WorkflowID, "", "skipped"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FinishDelivery(context.Background(), store.Finish{DeliveryID: skipped[0].ID,
		Status: policies.StatusDeadLettered, Reason: "skipped"}); err != nil {
		t.Fatal(err)
	}
	for name, ds := range map[string][]store.Delivery{"sequencer-delivered": delivered, "sequencer-skipped": skipped} {
		id := workflows.SequencerWorkflowID(ds[0].SubscriptionID, *ds[0].OrderingKey)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		err := c.GetWorkflow(ctx, id, "").Get(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		writeHistory(t, c, id, filepath.Join(historiesDir, name+".json"))
	}
	writeHistory(t, c, delivered[0].WorkflowID, filepath.Join(historiesDir, "sequencer-delivered-child.json"))
}

// publishOrdered makes an ordered subscription to a receiver following
// script (a custom policy retrying every second), publishes n events of one
// ordering key to it and hands their deliveries to s.
func publishOrdered(t *testing.T, c client.Client, s *starter.Starter, st *store.Store, script func(int) int, n int) []store.Delivery {
	t.Helper()
	ctx := context.Background()
	typ := fmt.Sprintf("ordered.%d", eventTypes.Add(1))
	sub := store.Subscription{AccountID: account, URL: newReceiver(t, script).URL + "/hook", EventTypes: []string{typ},
		Policy: policies.NameCustom, RetryPolicy: store.RawJSON(`{"custom": {"kind": "fixed", "interval_seconds": 1}}`),
		Active: true, Ordered: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var ds []store.Delivery
	for range n {
		pub, err := st.Publish(ctx, store.Event{AccountID: account, Type: typ, OrderingKey: "k", Data: store.RawJSON(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, pub.Deliveries...)
	}
	if err := s.Start(ctx, ds); err != nil {
		t.Fatal(err)
	}
	return ds
}

// waitStatus waits until d has status.
func waitStatus(t *testing.T, st *store.Store, d store.Delivery, status policies.Status) {
	t.Helper()
	for i := 0; ; i++ {
		got, err := st.GetDelivery(context.Background(), account, d.ID)
		if err == nil && got.Status == status {
			return
		}
		if i == 600 {
			t.Fatalf("%s never became %s", d.ID, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
