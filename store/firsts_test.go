package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestFirstAttemptHandedOver: issue 22. With FirstAttempts shared, a
// publish hands its delivery's target over, and the first attempt begun in
// the same process takes it: the target PostgreSQL would give (the event's
// body as stored), its row opened before the request and counted, the
// delivery's row otherwise untouched (its started mark is the start
// queue's). Taken once: a first attempt begun again reads its target and
// opens the next try, as after a crash. A delivery to an endpoint with
// limits is not handed over.
func TestFirstAttemptHandedOver(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	firsts := store.NewFirstAttempts()
	st.ShareFirstAttempts(firsts)
	sub := subscribeType(t, st, "first.handed", "workfront")
	pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "first.handed",
		Data: store.RawJSON(`{"b":2,  "a":1}`)})
	if err != nil || len(pub.Deliveries) != 1 || firsts.Len() != 1 {
		t.Fatalf("publish: %+v %v, %d handed over; want one", pub, err, firsts.Len())
	}
	id := pub.Deliveries[0].ID
	want, err := st.Target(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got, row, err := st.BeginTarget(ctx, store.Attempt{DeliveryID: id, StartedAt: time.Now()}, policies.AttemptStates(false), true)
	if err != nil || row == 0 || !sameTarget(got, want) || firsts.Len() != 0 {
		t.Fatalf("handed over: row %d, %v, %d left\n got %+v\nwant %+v", row, err, firsts.Len(), got, want)
	}
	rows := attemptRows(t, st, id)
	d, err := st.GetDelivery(ctx, store.DefaultAccount, id)
	if err != nil || len(rows) != 1 || rows[0].ErrorKind != store.KindInFlight || d.Attempts != 1 || d.Started {
		t.Fatalf("after the hand-over: rows %+v, delivery %+v (%v); want one open row, one attempt, not marked", rows, d, err)
	}
	if _, row2, err := st.BeginTarget(ctx, store.Attempt{DeliveryID: id, StartedAt: time.Now()},
		policies.AttemptStates(false), true); err != nil || row2 == 0 || row2 == row {
		t.Fatalf("begun again: row %d, %v; want a new row", row2, err)
	}
	if rows = attemptRows(t, st, id); len(rows) != 2 || rows[0].ErrorKind != store.KindUnknown {
		t.Errorf("rows after a second begin %+v, want the first closed as unknown", rows)
	}
	one := 1
	if _, err := st.SetLimits(ctx, store.DefaultAccount, sub.EndpointID, store.Limits{RateLimit: &one, RateLimitPeriodSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	publishType(t, st, "limited", "first.handed")
	if firsts.Len() != 0 {
		t.Errorf("limited endpoint: %d handed over, want none", firsts.Len())
	}
}

// sameTarget compares targets as PostgreSQL gave them, times by instant.
func sameTarget(a, b store.Target) bool {
	if !a.OccurredAt.Equal(b.OccurredAt) || !a.CreatedAt.Equal(b.CreatedAt) {
		return false
	}
	a.OccurredAt, a.CreatedAt = b.OccurredAt, b.CreatedAt
	return reflect.DeepEqual(a, b)
}

// attemptRows are delivery id's attempts rows.
func attemptRows(t *testing.T, st *store.Store, id string) []store.Attempt {
	t.Helper()
	as, err := st.Attempts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}
