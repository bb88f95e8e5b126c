package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestClaimBatchCountsWholeEvents: docs/policies.md#eventgrid-edge: "the
// preferred batch size counts each event as it is sent (the whole
// serialized event), not only its data" (issue 11, item 8). Three events
// with 2 bytes of data but 600-byte subjects do not fit a 1 KB batch
// together: the batch takes one. Its PublishedAt is its oldest delivery's
// creation, from which the time-to-live counts.
func TestClaimBatchCountsWholeEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/batch", EventTypes: []string{"big.subject"},
		Policy: "eventgrid-edge", RetryPolicy: store.RawJSON(`{}`), Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var first store.Delivery
	for i := range 3 {
		pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "big.subject",
			Subject: strings.Repeat("s", 600), Data: store.RawJSON(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = pub.Deliveries[0]
		}
	}
	b, err := st.ClaimBatch(ctx, store.BatchClaim{SubscriptionID: sub.ID, MaxEvents: 10, MaxBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.DeliveryIDs) != 1 || b.DeliveryIDs[0] != first.ID || b.Remaining != 2 {
		t.Fatalf("batch %+v: want the oldest event alone, 2 left", b)
	}
	if !b.PublishedAt.Equal(first.CreatedAt) {
		t.Fatalf("published at %v, want the delivery's creation %v", b.PublishedAt, first.CreatedAt)
	}
}

// TestClaimBatchCountsCloudEventsAsSent: issue 53, item 8. A CloudEvents
// subscription's events are sized as they are sent, attributes and extensions
// included: two events with 2 bytes of data but 600 bytes of extensions each
// do not fit a 1 KB batch together.
func TestClaimBatchCountsCloudEventsAsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/ce-batch", EventTypes: []string{"big.ext"},
		Policy: "eventgrid-edge", RetryPolicy: store.RawJSON(`{}`), Active: true,
		Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeEdge, Schema: eventgrid.SchemaCloudEvents,
			Validation: eventgrid.ValidationNone, MaxEventsPerBatch: 10, PreferredBatchSizeKB: 1}))}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	ext := store.RawJSON(`{"bigext": "` + strings.Repeat("x", 600) + `"}`)
	for range 2 {
		if _, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "big.ext", Data: store.RawJSON(`{}`),
			Fields: store.EventFields{Source: "/ce", Extensions: ext}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := st.ClaimBatch(ctx, store.BatchClaim{SubscriptionID: sub.ID, MaxEvents: 10, MaxBytes: 1024, Topic: "/topics/t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.DeliveryIDs) != 1 || b.Remaining != 1 {
		t.Fatalf("batch %+v: want one event, 1 left", b)
	}
}
