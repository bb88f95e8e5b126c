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
// publish opens its delivery's first attempts row (in flight, counted) in
// its own statement and hands the row and its target over, and the first
// attempt begun in the same process takes them with no statement: the
// target PostgreSQL would give (the event's body as stored), the row the
// publish opened, the delivery's row otherwise untouched (its started mark
// is the start queue's). Taken once: a first attempt begun again reads its
// target and opens the next try, as after a crash. A delivery to an
// endpoint with limits is not handed over, and has no row opened.
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
	rows := attemptRows(t, st, id)
	d, err := st.GetDelivery(ctx, store.DefaultAccount, id)
	if err != nil || len(rows) != 1 || rows[0].ErrorKind != store.KindInFlight || rows[0].Attempt != 0 || d.Attempts != 1 || d.Started {
		t.Fatalf("after the publish: rows %+v, delivery %+v (%v); want one open row, one attempt, not marked", rows, d, err)
	}
	// Begun with a canceled context, so with no statement.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	got, row, err := st.BeginTarget(canceled, store.Attempt{DeliveryID: id, StartedAt: time.Now()}, policies.AttemptStates(false), true)
	if err != nil || row == 0 || !sameTarget(got, want) || firsts.Len() != 0 {
		t.Fatalf("handed over: row %d, %v, %d left\n got %+v\nwant %+v", row, err, firsts.Len(), got, want)
	}
	if rows = attemptRows(t, st, id); len(rows) != 1 {
		t.Fatalf("after the hand-over: rows %+v, want the publish's only", rows)
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
	limited := publishType(t, st, "limited", "first.handed")
	if rows := attemptRows(t, st, limited.ID); firsts.Len() != 0 || len(rows) != 0 {
		t.Errorf("limited endpoint: %d handed over, rows %+v; want none", firsts.Len(), rows)
	}
}

// TestFirstAttemptTakenElsewhere: issue 22. A first attempt handed over
// whose workflow task another process took (the start was not eager): that
// process's open closes the row the publish opened as unknown and opens its
// own; the process that published drops its entry (NotEager) and deletes
// the row, unknown by then, as unsent, so the one row left stands for the
// one request. A row handed over whose attempt may not begin (the states
// asked for leave its endpoint out) is deleted by that begin.
func TestFirstAttemptTakenElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.DatabaseURL(t)
	owner, other := openStore(t, url), openStore(t, url)
	firsts := store.NewFirstAttempts()
	owner.ShareFirstAttempts(firsts)
	subscribeType(t, owner, "first.elsewhere", "workfront")
	pub := publishType(t, owner, "elsewhere", "first.elsewhere")
	states := policies.AttemptStates(false)
	if _, row, err := other.BeginTarget(ctx, store.Attempt{DeliveryID: pub.ID, StartedAt: time.Now()}, states, true); err != nil || row == 0 {
		t.Fatalf("begun elsewhere: row %d, %v", row, err)
	}
	if rows := attemptRows(t, owner, pub.ID); len(rows) != 2 || rows[0].ErrorKind != store.KindUnknown {
		t.Fatalf("rows %+v, want the publish's closed as unknown and the other's open", rows)
	}
	firsts.NotEager(pub.WorkflowID)
	if err := owner.DropUnsent(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := attemptRows(t, owner, pub.ID); len(rows) != 1 || rows[0].Try != 1 || rows[0].ErrorKind != store.KindInFlight {
		t.Fatalf("after NotEager: rows %+v, want the other's only", rows)
	}

	held := publishType(t, owner, "held", "first.elsewhere")
	if _, row, err := owner.BeginTarget(ctx, store.Attempt{DeliveryID: held.ID, StartedAt: time.Now()},
		[]string{"disabled"}, true); err != nil || row != 0 {
		t.Fatalf("begun for disabled endpoints only: row %d, %v; want none", row, err)
	}
	if rows := attemptRows(t, owner, held.ID); len(rows) != 0 {
		t.Fatalf("rows %+v, want the publish's deleted", rows)
	}
}

// TestFirstAttemptsDroppedAtStop: issue 22. A worker that stops deletes
// the rows of the first attempts handed over to it and not taken
// (DropHandedOver); a row taken stays, with its request to come.
func TestFirstAttemptsDroppedAtStop(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	firsts := store.NewFirstAttempts()
	st.ShareFirstAttempts(firsts)
	subscribeType(t, st, "first.stop", "workfront")
	taken, left := publishType(t, st, "taken", "first.stop"), publishType(t, st, "left", "first.stop")
	if _, row, err := st.BeginTarget(ctx, store.Attempt{DeliveryID: taken.ID, StartedAt: time.Now()},
		policies.AttemptStates(false), true); err != nil || row == 0 {
		t.Fatalf("begin: row %d, %v", row, err)
	}
	if err := st.DropHandedOver(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := attemptRows(t, st, taken.ID); len(rows) != 1 || firsts.Len() != 0 {
		t.Errorf("taken: rows %+v, %d held; want its row, none held", rows, firsts.Len())
	}
	if rows := attemptRows(t, st, left.ID); len(rows) != 0 {
		t.Errorf("not taken: rows %+v, want none", rows)
	}
}

// openStore opens a store of the database at url, migrated, sealing
// secrets with testenv's keys.
func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	st.UseKeys(testenv.Keys())
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
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
