package starter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestSweepWakesSequencer: issue 26. Deliveries of an ordered subscription
// stored but never handed on (a crash between the publish and the start)
// are handed by the sweeper to their key's Sequencer, one per key (signal-
// with-start), recorded as started, and delivered by a real worker.
func TestSweepWakesSequencer(t *testing.T) {
	t.Parallel()
	ctx, st, c := context.Background(), testenv.Store(t), testenv.Client(t)
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: rcv.URL, EventTypes: []string{"o"},
		Policy: policies.NameWorkfront, Active: true, Ordered: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, key := range []string{"a", "b", "a"} {
		res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "o", OrderingKey: key})
		if err != nil || len(res.Deliveries) != 1 || res.Deliveries[0].Seq == nil {
			t.Fatalf("publish: %+v %v", res, err)
		}
		ids = append(ids, res.Deliveries[0].ID)
	}
	s := testenv.Worker(t, c, st, worker.Options{})
	if err := s.SweepOnce(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b"} {
		if _, err := c.DescribeWorkflowExecution(ctx, workflows.SequencerWorkflowID(sub.ID, key), ""); err != nil {
			t.Errorf("sequencer of %s: %v", key, err)
		}
	}
	for _, id := range ids {
		for i := 0; ; i++ {
			d := delivery(t, st, id)
			if d.Started && d.Status == policies.StatusDelivered {
				break
			}
			if i == 300 {
				t.Fatalf("delivery %s: %s, started %v", id, d.Status, d.Started)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
