package store_test

import (
	"context"
	"testing"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestBacklog: pending deliveries count until their first attempt ends,
// unstarted ones until their workflow is recorded as started, and the lag
// is the age of the oldest pending one; other accounts do not count.
func TestBacklog(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/b",
		EventTypes: []string{"b"}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, id := range []string{"b1", "b2", "b3"} {
		res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, ExternalID: id, Type: "b"})
		if err != nil || len(res.Deliveries) != 1 {
			t.Fatalf("publish: %+v %v", res, err)
		}
		ids = append(ids, res.Deliveries[0].ID)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE deliveries SET created_at = now() - interval '90 seconds'
		WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkStarted(ctx, ids[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: ids[0], Status: policies.StatusDelivered}); err != nil {
		t.Fatal(err)
	}
	b, err := st.Backlog(ctx, store.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	if b.Pending != 2 || b.Unstarted != 1 || b.OldestPendingAt == nil || b.LagSeconds < 0 || b.LagSeconds > 60 {
		t.Errorf("backlog %+v, want 2 pending, 1 unstarted, lag under a minute (the 90 s old one is delivered)", b)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE deliveries SET created_at = now() - interval '90 seconds'
		WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	total, err := st.TotalBacklog(ctx)
	if err != nil || total.Pending != 2 || total.LagSeconds < 90 {
		t.Errorf("total backlog %+v %v, want 2 pending, lag at least 90 s", total, err)
	}
	other, err := st.Backlog(ctx, "acct_other")
	if err != nil || other.Pending != 0 || other.OldestPendingAt != nil || other.LagSeconds != 0 {
		t.Errorf("another account's backlog %+v %v, want empty", other, err)
	}
}
