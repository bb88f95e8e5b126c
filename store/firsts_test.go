package store_test

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestPublishOpensFirstAttempt: issue 22. With FirstAttempts shared, a
// publish writes the first attempt's row (in flight) with the event, and
// the attempt begun in the same process finds that row and the target
// PostgreSQL would give, event body as stored, without a statement. Taken
// once: a first attempt begun again (elsewhere, or after a crash) closes
// the row it cannot know was sent as unknown and opens another. A delivery
// to an endpoint with limits, or a store that shares none, opens nothing.
func TestPublishOpensFirstAttempt(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	st.ShareFirstAttempts(store.NewFirstAttempts())
	sub := subscribeType(t, st, "first.opened", "workfront")
	pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "first.opened",
		Data: store.RawJSON(`{"b":2,  "a":1}`)})
	if err != nil || len(pub.Deliveries) != 1 || pub.Deliveries[0].Attempts != 1 {
		t.Fatalf("publish: %+v %v; want one delivery with its attempt opened", pub, err)
	}
	id := pub.Deliveries[0].ID
	rows := attemptRows(t, st, id)
	if len(rows) != 1 || rows[0].ErrorKind != store.KindInFlight || rows[0].Attempt != 0 {
		t.Fatalf("rows after publish %+v, want one in flight", rows)
	}
	var openRow int64
	if err := st.DB().GetContext(ctx, &openRow, `SELECT id FROM attempts WHERE delivery_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	want, err := st.Target(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var prepares atomic.Int64
	store.CountPrepares(st, &prepares)
	got, row, err := st.BeginTarget(ctx, store.Attempt{DeliveryID: id, StartedAt: time.Now()}, policies.AttemptStates(false), true)
	if err != nil || row != openRow || !sameTarget(got, want) {
		t.Fatalf("handed over: row %d (want %d), %v\n got %+v\nwant %+v", row, openRow, err, got, want)
	}
	if n := len(attemptRows(t, st, id)); n != 1 || prepares.Load() != 0 {
		t.Errorf("%d rows, %d statements prepared after the hand-over; want 1 and none", n, prepares.Load())
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
	if n := publishedRows(t, st, "first.opened"); n != 0 {
		t.Errorf("limited endpoint: %d rows opened, want none", n)
	}
	plain := testenv.Store(t)
	subscribeType(t, plain, "first.plain", "workfront")
	if n := publishedRows(t, plain, "first.plain"); n != 0 {
		t.Errorf("store sharing none: %d rows opened, want none", n)
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

// publishedRows publishes an event of typ to its one subscription and
// counts the attempts rows its delivery has.
func publishedRows(t *testing.T, st *store.Store, typ string) int {
	t.Helper()
	res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, Type: typ})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish %s: %+v %v", typ, res, err)
	}
	if res.Deliveries[0].Attempts != 0 {
		t.Errorf("publish %s: %d attempts, want 0", typ, res.Deliveries[0].Attempts)
	}
	return len(attemptRows(t, st, res.Deliveries[0].ID))
}
