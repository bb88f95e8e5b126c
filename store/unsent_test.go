package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestUnsentRowsDropped: an open whose statement failed may still have
// written its row (PostgreSQL stopping between the commit and its answer),
// but no request went out for it. The next open of that delivery in the
// same process removes the row instead of closing it as unknown, so the
// rows left match the requests; a row nothing failed on is still closed as
// unknown by the next open, as one a crash cut off.
func TestUnsentRowsDropped(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	subscribeType(t, st, "unsent.row", "eventgrid")
	id := publishType(t, st, "unsent-1", "unsent.row").ID
	open := func(ctx context.Context, at time.Time) error {
		_, err := st.BeginAttempts(ctx, []store.Attempt{{DeliveryID: id, ScheduledAt: at, StartedAt: at}})
		return err
	}
	kinds := func() []string {
		t.Helper()
		out := []string{}
		for _, a := range attemptRows(t, st, id) {
			out = append(out, a.ErrorKind)
		}
		return out
	}

	// A failed open is remembered; nothing was written, so the next open
	// removes nothing and forgets it.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := open(canceled, time.Now()); err == nil || store.UnsentLen(st) != 1 {
		t.Fatalf("canceled open: %v, %d remembered; want an error, one remembered", err, store.UnsentLen(st))
	}
	lost := time.Now()
	if err := open(ctx, lost); err != nil || store.UnsentLen(st) != 0 {
		t.Fatalf("open: %v, %d remembered", err, store.UnsentLen(st))
	}
	// That open's answer is taken as lost: its row is removed by the next.
	store.NoteUnsent(st, id, lost)
	if err := open(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); len(got) != 1 || got[0] != store.KindInFlight {
		t.Fatalf("after a lost answer: rows %q, want one in flight", got)
	}
	// A row nothing failed on is closed as unknown.
	if err := open(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); len(got) != 2 || got[0] != store.KindUnknown || got[1] != store.KindInFlight {
		t.Errorf("after a cut-off row: rows %q, want unknown then in flight", got)
	}
	// DropUnsent removes a lost answer's row without waiting for the next
	// open, and forgets it.
	store.NoteUnsent(st, id, attemptRows(t, st, id)[1].StartedAt)
	if err := st.DropUnsent(ctx); err != nil || store.UnsentLen(st) != 0 {
		t.Fatalf("DropUnsent: %v, %d remembered", err, store.UnsentLen(st))
	}
	if got := kinds(); len(got) != 1 || got[0] != store.KindUnknown {
		t.Errorf("after DropUnsent: rows %q, want the unknown one only", got)
	}
}
