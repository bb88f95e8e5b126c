package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestRelaxedOutcome: the outcome written in the background commits
// without waiting for the disk, and only it: every other write waits. It
// records the same as CompleteAttempts: the row completed, the endpoint
// counted, the delivery delivered.
func TestRelaxedOutcome(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	main, relaxed, err := store.SessionSetting(ctx, st, "synchronous_commit")
	if err != nil || strings.HasSuffix(main, " client") || relaxed != "off client" {
		t.Fatalf("synchronous_commit: main pool %q, relaxed pool %q (%v); want the server's, and off set by the client", main, relaxed, err)
	}
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/relaxed",
		EventTypes: []string{"relaxed"}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "relaxed", Data: store.RawJSON(`{}`)})
	if err != nil || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %+v %v", pub, err)
	}
	d := pub.Deliveries[0]
	rows, err := st.BeginAttempts(ctx, []store.Attempt{{DeliveryID: d.ID, ScheduledAt: time.Now(), StartedAt: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := st.CompleteAttemptsRelaxed(ctx, sub.EndpointID, rows, store.Attempt{StartedAt: time.Now(), StatusCode: 200, Success: true}, d.ID)
	if err != nil || done.Counters.Attempts != 1 || done.Delivered == nil {
		t.Fatalf("completed %+v (%v), want one attempt counted and the delivery delivered", done, err)
	}
	got, err := st.GetDelivery(ctx, store.DefaultAccount, d.ID)
	if err != nil || got.Status != policies.StatusDelivered {
		t.Errorf("delivery %+v (%v), want delivered", got, err)
	}
}
