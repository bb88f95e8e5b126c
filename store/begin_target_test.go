package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestBeginTarget: issue 22. An attempt to an enabled endpoint without
// limits is begun with its target in one statement (its open row written);
// one to a disabled endpoint (not a probe) or, when it may be throttled, to
// an endpoint with limits writes nothing and leaves the decision to the
// caller, with the target as Target has it.
func TestBeginTarget(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/begin",
		EventTypes: []string{"begin.target"}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "begin.target", Data: store.RawJSON(`{"a":1}`)})
	if err != nil || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %+v %v", pub, err)
	}
	id := pub.Deliveries[0].ID
	begin := func(probe, mayThrottle bool) int64 {
		t.Helper()
		tg, row, err := st.BeginTarget(ctx, store.Attempt{DeliveryID: id, ScheduledAt: time.Now(), StartedAt: time.Now()},
			policies.AttemptStates(probe), mayThrottle)
		if err != nil || tg.DeliveryID != id || tg.EndpointID != sub.EndpointID || string(tg.Data) != `{"a": 1}` {
			t.Fatalf("target %+v, %v", tg, err)
		}
		return row
	}
	openRows := func() int {
		t.Helper()
		as, err := st.Attempts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return len(as)
	}
	if row := begin(false, true); row == 0 || openRows() != 1 {
		t.Fatalf("enabled, unlimited: row %d, %d rows; want one begun", row, openRows())
	}
	// An attempt begun proves the workflow started: the sweeper leaves it.
	if d, err := st.GetDelivery(ctx, store.DefaultAccount, id); err != nil || !d.Started {
		t.Errorf("begun delivery started %v (%v), want started", d.Started, err)
	}
	one := 1
	if _, err := st.SetLimits(ctx, store.DefaultAccount, sub.EndpointID, store.Limits{MaxConcurrency: &one, RateLimitPeriodSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	if row := begin(false, true); row != 0 || openRows() != 1 {
		t.Errorf("limited, may throttle: row %d, %d rows; want none begun", row, openRows())
	}
	if row := begin(false, false); row == 0 || openRows() != 2 {
		t.Errorf("limited, may not throttle: row %d, %d rows; want one more begun", row, openRows())
	}
	if _, err := st.ChangeEndpointState(ctx, store.ChangeState{EndpointID: sub.EndpointID, From: policies.StateEnabled,
		To: policies.StateDisabled, Reason: "test", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if row := begin(false, false); row != 0 || openRows() != 2 {
		t.Errorf("disabled: row %d, %d rows; want none begun", row, openRows())
	}
	if row := begin(true, false); row == 0 || openRows() != 3 {
		t.Errorf("disabled, probe: row %d, %d rows; want one more begun", row, openRows())
	}
}

// TestMarkStartedSkipsHeldRows: MarkStarted neither waits for a delivery's
// row another transaction holds (a first attempt being begun marks it
// itself) nor marks it; it marks the others. A row it skipped and nothing
// marked stays unstarted, for the sweeper.
func TestMarkStartedSkipsHeldRows(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	subscribeType(t, st, "mark.started", "workfront")
	ids := []string{publishType(t, st, "mark-0", "mark.started").ID, publishType(t, st, "mark-1", "mark.started").ID}
	tx, err := st.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE`, ids[0]); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := st.MarkStarted(wait, ids); err != nil {
		t.Fatalf("MarkStarted beside a held row: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true} {
		if d, err := st.GetDelivery(ctx, store.DefaultAccount, ids[i]); err != nil || d.Started != want {
			t.Errorf("delivery %d started %v (%v), want %v", i, d.Started, err, want)
		}
	}
}
