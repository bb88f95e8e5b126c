package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestOperationalEventsRaiseNoneAboutThemselves: a dead letter raises one
// hookrelay.delivery.dead_lettered event, with the documented payload, in
// the same transaction; finishing again raises nothing more; and the dead
// letter of that operational event's own delivery raises none.
func TestOperationalEventsRaiseNoneAboutThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/all", EventTypes: []string{"*"},
		Policy: policies.NameWorkfront, RetryPolicy: store.RawJSON(`{}`), Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, ExternalID: "order-1", Type: "order.created", Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	dead := store.Finish{DeliveryID: pub.Deliveries[0].ID, Status: policies.StatusDeadLettered, Reason: "r", LastStatus: 503}
	f, err := st.FinishDelivery(ctx, dead)
	if err != nil || f.Raised.Type != store.EventDeliveryDeadLettered || len(f.Raised.Deliveries) != 1 {
		t.Fatalf("first finish: %+v %v", f, err)
	}
	var data store.DeliveryEvent
	var raw []byte
	if err := st.DB().Get(&raw, `SELECT data FROM events WHERE type = $1`, store.EventDeliveryDeadLettered); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &data); err != nil || data.EventID != "order-1" || data.DeadLetterID != f.DeadLetterID ||
		data.LastStatusCode != 503 || data.Policy != policies.NameWorkfront {
		t.Fatalf("payload %s (%v)", raw, err)
	}
	if again, err := st.FinishDelivery(ctx, dead); err != nil || again.Raised.Type != "" {
		t.Fatalf("second finish: %+v %v", again, err)
	}
	opDelivery := f.Raised.Deliveries[0]
	if own, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: opDelivery.ID, Status: policies.StatusDeadLettered}); err != nil ||
		own.Raised.Type != "" || own.DeadLetterID == "" {
		t.Fatalf("the operational event's dead letter: %+v %v", own, err)
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM events WHERE type LIKE 'hookrelay.%'`); err != nil || n != 1 {
		t.Fatalf("%d operational events (%v), want 1", n, err)
	}
}
