package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestOrderedNumbersFollowCommits: issue 26. Deliveries to an ordered
// subscription are numbered in the order their publications commit: a
// publication of a key waits for one of the same key still uncommitted, and
// gets the higher number; another key's does not wait. The first
// publication is held inside its transaction, after its number was taken,
// by a trigger waiting on a lock the test holds.
func TestOrderedNumbersFollowCommits(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/o", EventTypes: []string{"o"},
		Policy: "workfront", Active: true, Ordered: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`CREATE FUNCTION test_gate() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.external_id = 'held' THEN PERFORM pg_advisory_xact_lock(4242); END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_gate BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_gate();`); err != nil {
		t.Fatal(err)
	}
	gate, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = gate.Rollback() }()
	if _, err := gate.Exec(`SELECT pg_advisory_xact_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	held := publishAsync(st, "held", "k")
	waitLockWaiters(t, st, 1)
	behind := publishAsync(st, "behind", "k")
	waitLockWaiters(t, st, 2)
	other := <-publishAsync(st, "other", "j")
	if other.err != nil || *other.d.Seq == 0 {
		t.Fatalf("another key's publication: %+v", other)
	}
	if err := gate.Rollback(); err != nil {
		t.Fatal(err)
	}
	first, second := <-held, <-behind
	if first.err != nil || second.err != nil {
		t.Fatal(first.err, second.err)
	}
	if *first.d.Seq >= *second.d.Seq || *first.d.OrderingKey != "k" {
		t.Fatalf("numbers %d (committed first) and %d", *first.d.Seq, *second.d.Seq)
	}
}

type published struct {
	d   store.Delivery
	err error
}

// publishAsync publishes an event of type o with an ordering key, in the
// background.
func publishAsync(st *store.Store, id, key string) chan published {
	ch := make(chan published, 1)
	go func() {
		res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, ExternalID: id,
			Type: "o", OrderingKey: key})
		if err == nil && len(res.Deliveries) != 1 {
			err = fmt.Errorf("%d deliveries, want 1", len(res.Deliveries))
		}
		var d store.Delivery
		if err == nil {
			d = res.Deliveries[0]
		}
		ch <- published{d, err}
	}()
	return ch
}

// waitLockWaiters waits until n sessions of the test's database wait on a
// lock.
func waitLockWaiters(t *testing.T, st *store.Store, n int) {
	t.Helper()
	for i := 0; ; i++ {
		var got int
		if err := st.DB().Get(&got, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if i == 300 {
			t.Fatalf("%d sessions wait on a lock, want %d", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
