package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestRecordBatchAttemptCountsOnce: one request carrying three deliveries is
// one attempt row per delivery but one count against the endpoint; recording
// it again (an activity retried) adds nothing, and the next failed request
// adds one consecutive failure.
func TestRecordBatchAttemptCountsOnce(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/batch",
		EventTypes: []string{"batch.attempt"}, Policy: "eventgrid-edge", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 3; i++ {
		pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "batch.attempt", Data: store.RawJSON(`{}`)})
		if err != nil || len(pub.Deliveries) != 1 {
			t.Fatalf("publish: %+v %v", pub, err)
		}
		ids = append(ids, pub.Deliveries[0].ID)
	}
	record := func(attempt int) store.Counters {
		t.Helper()
		as := make([]store.Attempt, len(ids))
		for i, id := range ids {
			as[i] = store.Attempt{DeliveryID: id, Attempt: attempt, ScheduledAt: time.Now(), StartedAt: time.Now(),
				StatusCode: 500, ErrorKind: "http_status"}
		}
		c, err := st.RecordBatchAttempt(ctx, sub.EndpointID, as)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, step := range []struct{ attempt, want int }{{0, 1}, {0, 1}, {1, 2}} {
		c := record(step.attempt)
		if c.Attempts != int64(step.want) || c.ConsecutiveFailures != int64(step.want) {
			t.Errorf("after attempt %d: %d attempts, %d consecutive failures; want %d each",
				step.attempt, c.Attempts, c.ConsecutiveFailures, step.want)
		}
	}
	for _, id := range ids {
		as, err := st.Attempts(ctx, id)
		if err != nil || len(as) != 2 {
			t.Errorf("delivery %s: %d attempt rows (%v), want 2", id, len(as), err)
		}
	}
	var bucket int64
	if err := st.DB().Get(&bucket, `SELECT COALESCE(SUM(attempts), 0) FROM endpoint_buckets WHERE endpoint_id = $1`,
		sub.EndpointID); err != nil || bucket != 2 {
		t.Errorf("buckets count %d attempts (%v), want 2", bucket, err)
	}
}
