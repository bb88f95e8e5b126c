package store_test

import (
	"context"
	"testing"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestReplacedURLMovesInFlightDeliveries: when a subscription is replaced
// with another URL, its deliveries still in flight move to the new URL's
// endpoint (whose health gates, probes and releases them); finished ones keep
// the endpoint they were attempted against.
func TestReplacedURLMovesInFlightDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	name := "orders"
	sub := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://old.test/hook",
		EventTypes: []string{"t"}, Policy: "eventgrid", Active: true}
	if _, err := st.PutSubscriptionByName(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	oldEndpoint := sub.EndpointID
	inFlight := publish(t, st, "e1")
	done := publish(t, st, "e2")
	if _, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: done.ID, Status: policies.StatusDelivered}); err != nil {
		t.Fatal(err)
	}
	moved := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://new.test/hook",
		EventTypes: []string{"t"}, Policy: "eventgrid", Active: true}
	if _, err := st.PutSubscriptionByName(ctx, &moved); err != nil {
		t.Fatal(err)
	}
	if moved.EndpointID == oldEndpoint {
		t.Fatal("the new URL got the old endpoint")
	}
	if d, _ := st.GetDelivery(ctx, store.DefaultAccount, inFlight.ID); d.EndpointID != moved.EndpointID {
		t.Errorf("in-flight delivery on endpoint %s, want the new %s", d.EndpointID, moved.EndpointID)
	}
	if d, _ := st.GetDelivery(ctx, store.DefaultAccount, done.ID); d.EndpointID != oldEndpoint {
		t.Errorf("finished delivery moved to %s, want it kept on %s", d.EndpointID, oldEndpoint)
	}
	if tg, err := st.Target(ctx, inFlight.ID); err != nil || tg.EndpointID != moved.EndpointID || tg.URL != moved.URL {
		t.Errorf("target %+v (%v)", tg, err)
	}
}

func publish(t *testing.T, st *store.Store, id string) store.Delivery {
	t.Helper()
	res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, ExternalID: id, Type: "t"})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish %s: %+v %v", id, res, err)
	}
	return res.Deliveries[0]
}
