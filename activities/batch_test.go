package activities_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestClaimBatchRetriedWithSameID: a ClaimBatch retried with the same batch id
// (its first completion lost) returns the batch the first try claimed and
// claims nothing more; the next id claims the next deliveries.
func TestClaimBatchRetriedWithSameID(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/batch", EventTypes: []string{t.Name()},
		Policy: policies.NameEventGridEdge, Active: true, Options: store.RawJSON(`{"eventgrid":{"max_events_per_batch":2}}`)}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: t.Name(), Data: store.RawJSON(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	claim := func(id string) workflows.ClaimResult {
		t.Helper()
		res, err := acts.ClaimBatch(ctx, workflows.ClaimInput{SubscriptionID: sub.ID, BatchID: id})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first, again := claim("batch_test_0"), claim("batch_test_0")
	if first.BatchID != "batch_test_0" || len(first.DeliveryIDs) != 2 || first.Remaining != 3 {
		t.Fatalf("first claim %+v", first)
	}
	if fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("retried claim %+v, want %+v", again, first)
	}
	var started int
	if err := st.DB().Get(&started, `SELECT count(*) FROM deliveries WHERE subscription_id = $1 AND started`, sub.ID); err != nil {
		t.Fatal(err)
	}
	if started != 2 {
		t.Fatalf("%d deliveries started, want 2", started)
	}
	next := claim("batch_test_1")
	if len(next.DeliveryIDs) != 2 || next.Remaining != 1 || next.DeliveryIDs[0] == first.DeliveryIDs[0] {
		t.Fatalf("next claim %+v", next)
	}
}
