package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// putEG stores an Event Grid subscription named name for event type typ.
func putEG(t *testing.T, st *store.Store, name, typ string, eg eventgrid.Settings) store.Subscription {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://127.0.0.1:1/" + name,
		EventTypes: []string{typ}, Policy: "eventgrid", Active: true, Options: eventgrid.Options(eg)}
	if _, err := st.PutSubscriptionByName(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

// subscribeType subscribes a loopback URL of the default account to typ
// under policy.
func subscribeType(t *testing.T, st *store.Store, typ, policy string) store.Subscription {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/" + typ,
		EventTypes: []string{typ}, Policy: policy, Active: true}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

func publishType(t *testing.T, st *store.Store, id, typ string) store.Delivery {
	t.Helper()
	res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, ExternalID: id, Type: typ})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish %s: %+v %v", id, res, err)
	}
	return res.Deliveries[0]
}

func wantDelivery(t *testing.T, st *store.Store, id string, status policies.Status, reason string, started bool) {
	t.Helper()
	d, err := st.GetDelivery(context.Background(), store.DefaultAccount, id)
	if err != nil || d.Status != status || d.FinalReason != reason || d.Started != started {
		t.Fatalf("delivery %s: %s %q started=%v (%v), want %s %q started=%v",
			id, d.Status, d.FinalReason, d.Started, err, status, reason, started)
	}
}

func pendingEG() eventgrid.Settings {
	return eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaEventGrid,
		Validation: eventgrid.ValidationPending, ValidationCode: "code-1"}
}

// TestDeleteAwaitingDropsUnstarted: deleting a subscription still awaiting
// its handshake drops its unstarted deliveries; deleting a validated one
// leaves its deliveries to finish.
func TestDeleteAwaitingDropsUnstarted(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	putEG(t, st, "awaiting", "a", pendingEG())
	done := eventgrid.Settings{Mode: eventgrid.ModeCloud, Validation: eventgrid.ValidationSucceeded}
	putEG(t, st, "validated", "v", done)
	waiting, live := publishType(t, st, "e1", "a"), publishType(t, st, "e2", "v")
	for _, name := range []string{"awaiting", "validated"} {
		if err := st.DeleteSubscriptionByName(ctx, store.DefaultAccount, name); err != nil {
			t.Fatal(err)
		}
	}
	wantDelivery(t, st, waiting.ID, policies.StatusDropped, store.ReasonDeletedBeforeValidation, true)
	wantDelivery(t, st, live.ID, "pending", "", false)
	if err := st.DeleteSubscriptionByName(ctx, store.DefaultAccount, "awaiting"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want not found", err)
	}
}

// TestFailedValidationDropsUnstarted: a failed handshake drops the
// subscription's unstarted deliveries.
func TestFailedValidationDropsUnstarted(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	sub := putEG(t, st, "failing", "f", pendingEG())
	d := publishType(t, st, "e1", "f")
	if ok, err := st.SetEventGridValidation(ctx, sub.ID, "other-code", eventgrid.ValidationFailed); ok || err != nil {
		t.Fatalf("wrong code: %v %v", ok, err)
	}
	wantDelivery(t, st, d.ID, "pending", "", false)
	if ok, err := st.SetEventGridValidation(ctx, sub.ID, "code-1", eventgrid.ValidationFailed); !ok || err != nil {
		t.Fatalf("fail: %v %v", ok, err)
	}
	wantDelivery(t, st, d.ID, policies.StatusDropped, store.ReasonValidationFailed, true)
}

// TestSweepSelection: the per-delivery sweep leaves out batching
// subscriptions' deliveries (their batchers are woken instead) and puts off
// deliveries whose start failed, after those never tried.
func TestSweepSelection(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	batching := eventgrid.Settings{Mode: eventgrid.ModeEdge, Validation: eventgrid.ValidationNone, MaxEventsPerBatch: 2}
	bsub := putEG(t, st, "batching", "b", batching)
	putEG(t, st, "plain", "p", eventgrid.Settings{Mode: eventgrid.ModeEdge, Validation: eventgrid.ValidationNone})
	publishType(t, st, "e1", "b")
	failing, fresh := publishType(t, st, "e2", "p"), publishType(t, st, "e3", "p")
	ds, err := st.UnstartedDeliveries(ctx, 0, 10)
	if err != nil || !slices.Equal(ids(ds), []string{failing.ID, fresh.ID}) {
		t.Fatalf("unstarted %v (%v), want %s %s", ids(ds), err, failing.ID, fresh.ID)
	}
	if _, err := st.StartFailed(ctx, []string{failing.ID}); err != nil {
		t.Fatal(err)
	}
	if ds, err := st.UnstartedDeliveries(ctx, 0, 10); err != nil || !slices.Equal(ids(ds), []string{fresh.ID}) {
		t.Fatalf("after a failed start: %v (%v), want only %s", ids(ds), err, fresh.ID)
	}
	subs, err := st.SubscriptionsWithUnstarted(ctx, 0, false)
	if err != nil || len(subs) != 1 || subs[0].ID != bsub.ID {
		t.Fatalf("batching subscriptions to wake: %+v (%v), want %s", subs, err, bsub.ID)
	}
}

// TestStrandedBatches: a claimed batch whose deliveries are all pending is a
// candidate; once one of them finishes it is not.
func TestStrandedBatches(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	batching := eventgrid.Settings{Mode: eventgrid.ModeEdge, Validation: eventgrid.ValidationNone, MaxEventsPerBatch: 2}
	sub := putEG(t, st, "batching", "b", batching)
	d1 := publishType(t, st, "e1", "b")
	publishType(t, st, "e2", "b")
	b, err := st.ClaimBatch(ctx, store.BatchClaim{SubscriptionID: sub.ID, ID: "batch_1", MaxEvents: 2})
	if err != nil || len(b.DeliveryIDs) != 2 {
		t.Fatalf("claim: %+v %v", b, err)
	}
	bs, err := st.StrandedBatches(ctx, 0, 10)
	if err != nil || len(bs) != 1 || bs[0].ID != "batch_1" || bs[0].SubscriptionID != sub.ID || len(bs[0].DeliveryIDs) != 2 {
		t.Fatalf("stranded: %+v %v", bs, err)
	}
	if _, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: d1.ID, Status: policies.StatusDelivered}); err != nil {
		t.Fatal(err)
	}
	if bs, err := st.StrandedBatches(ctx, 0, 10); err != nil || len(bs) != 0 {
		t.Fatalf("after a delivery finished: %+v %v", bs, err)
	}
}

func ids(ds []store.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestLeasedStartsAreNotSwept: a delivery a start queue leased is not the
// sweeper's until the lease ends; a lease never shortens a failed start's
// back-off, and ending it leaves that back-off alone.
func TestLeasedStartsAreNotSwept(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	subscribeType(t, st, "l", "eventgrid")
	leased, failing := publishType(t, st, "e1", "l"), publishType(t, st, "e2", "l")
	if _, err := st.StartFailed(ctx, []string{failing.ID}); err != nil {
		t.Fatal(err)
	}
	both := []string{leased.ID, failing.ID}
	if err := st.LeaseStarts(ctx, both, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	testenv.WantSwept(t, st, leased.ID) // the lease ended; the other's back-off kept
	if err := st.LeaseStarts(ctx, both, time.Hour); err != nil {
		t.Fatal(err)
	}
	testenv.WantSwept(t, st)
	if err := st.EndLeases(ctx, both); err != nil {
		t.Fatal(err)
	}
	testenv.WantSwept(t, st, leased.ID)
}
