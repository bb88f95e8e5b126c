package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestCompleteSuccesses: three successes to one endpoint recorded in one
// statement count three attempts once each (endpoint counters and minute
// bucket), reset its consecutive failures and finish their deliveries;
// recording them again, or a row the sweeper settled already, counts and
// finishes nothing more.
func TestCompleteSuccesses(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/successes",
		EventTypes: []string{"success.batch"}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	failed, err := st.BeginAttempts(ctx, []store.Attempt{{DeliveryID: publishOne(t, st), StartedAt: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CompleteAttempts(ctx, sub.EndpointID, failed, store.Attempt{StartedAt: time.Now(), StatusCode: 500, ErrorKind: "http_status"}, ""); err != nil {
		t.Fatal(err)
	}
	var ss []store.Success
	for range 3 {
		id := publishOne(t, st)
		rows, err := st.BeginAttempts(ctx, []store.Attempt{{DeliveryID: id, ScheduledAt: time.Now(), StartedAt: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, store.Success{Row: rows[0], DeliveryID: id, StartedAt: time.Now(), DurationMs: 1.5,
			StatusCode: 204, ResponseBody: "ok", ResponseHeaders: store.RawJSON(`{"X-A":"b"}`)})
	}
	ds, err := st.CompleteSuccesses(ctx, sub.EndpointID, ss)
	if err != nil || len(ds) != 3 {
		t.Fatalf("%d delivered, %v; want 3", len(ds), err)
	}
	checkEndpoint(t, st, sub.EndpointID, 4, 0)
	for _, s := range ss {
		d, err := st.GetDelivery(ctx, store.DefaultAccount, s.DeliveryID)
		if err != nil || d.Status != policies.StatusDelivered {
			t.Errorf("delivery %s: %s %v, want delivered", s.DeliveryID, d.Status, err)
		}
		as, err := st.Attempts(ctx, s.DeliveryID)
		if err != nil || len(as) != 1 || !as[0].Success || as[0].StatusCode != 204 || as[0].ErrorKind != "" || as[0].ResponseBody != "ok" {
			t.Errorf("attempts of %s: %+v %v", s.DeliveryID, as, err)
		}
	}
	if ds, err := st.CompleteSuccesses(ctx, sub.EndpointID, ss); err != nil || len(ds) != 0 {
		t.Errorf("again: %d delivered, %v; want none", len(ds), err)
	}
	checkEndpoint(t, st, sub.EndpointID, 4, 0)
	var bucket int64
	if err := st.DB().GetContext(ctx, &bucket, `SELECT sum(attempts) FROM endpoint_buckets WHERE endpoint_id = $1`, sub.EndpointID); err != nil || bucket != 4 {
		t.Errorf("minute buckets count %d attempts (%v), want 4", bucket, err)
	}
}

// publishOne publishes one success.batch event and returns its delivery.
func publishOne(t *testing.T, st *store.Store) string {
	t.Helper()
	pub, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, Type: "success.batch", Data: store.RawJSON(`{}`)})
	if err != nil || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %+v %v", pub, err)
	}
	return pub.Deliveries[0].ID
}

// checkEndpoint checks the endpoint's attempt and consecutive-failure counts.
func checkEndpoint(t *testing.T, st *store.Store, id string, attempts, consecutive int64) {
	t.Helper()
	e, err := st.GetEndpoint(context.Background(), store.DefaultAccount, id)
	if err != nil || e.Attempts != attempts || e.ConsecutiveFailures != consecutive || e.LastSuccessAt == nil {
		t.Errorf("endpoint %+v %v, want %d attempts, %d consecutive failures and a last success", e, err, attempts, consecutive)
	}
}
