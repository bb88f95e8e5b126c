package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestAttemptsBeginAndComplete: one request carrying three deliveries is
// one attempts row per delivery, written before it is sent, but one count
// against the endpoint; completing it again adds nothing. An execution a
// crash cut off leaves its rows open; the next execution of that attempt
// closes them as unknown and gets rows of its own, so every request sent
// has its row.
func TestAttemptsBeginAndComplete(t *testing.T) {
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
	begin := func(attempt int) []int64 {
		t.Helper()
		as := make([]store.Attempt, len(ids))
		for i, id := range ids {
			as[i] = store.Attempt{DeliveryID: id, Attempt: attempt, ScheduledAt: time.Now(), StartedAt: time.Now()}
		}
		rows, err := st.BeginAttempts(ctx, as)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	complete := func(rows []int64, want int64) {
		t.Helper()
		done, err := st.CompleteAttempts(ctx, sub.EndpointID, rows, store.Attempt{StartedAt: time.Now(), StatusCode: 500, ErrorKind: "http_status"}, "")
		c := done.Counters
		if err != nil || c.Attempts != want || c.ConsecutiveFailures != want {
			t.Errorf("counters %+v (%v), want %d attempts and consecutive failures", c, err, want)
		}
	}
	first := begin(0)
	complete(first, 1)
	complete(first, 1) // again: counted once
	begin(1)           // cut off by a crash: never completed
	complete(begin(1), 2)
	for _, id := range ids {
		as, err := st.Attempts(ctx, id)
		if err != nil || len(as) != 3 || as[0].ErrorKind != "http_status" || as[1].ErrorKind != store.KindUnknown ||
			as[2].ErrorKind != "http_status" || as[2].Try != 1 {
			t.Errorf("delivery %s: rows %+v (%v), want done, unknown, done (try 1)", id, as, err)
		}
	}
	var bucket int64
	if err := st.DB().Get(&bucket, `SELECT COALESCE(SUM(attempts), 0) FROM endpoint_buckets WHERE endpoint_id = $1`,
		sub.EndpointID); err != nil || bucket != 2 {
		t.Errorf("buckets count %d attempts (%v), want 2", bucket, err)
	}
}
