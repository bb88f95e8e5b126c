package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestPruneBuckets: buckets older than the retention go, newer ones (the
// largest 30-day window included) stay.
func TestPruneBuckets(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/prune",
		EventTypes: []string{"prune.test"}, Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Minute)
	ages := []time.Duration{store.BucketRetention + time.Hour, store.BucketRetention + time.Minute,
		store.BucketRetention - time.Minute, 30 * 24 * time.Hour, time.Hour}
	for _, age := range ages {
		if _, err := st.DB().Exec(`INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
			VALUES ($1, $2, 1, 1)`, sub.EndpointID, now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.PruneBuckets(ctx, now.Add(-store.BucketRetention))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want 2", n, err)
	}
	var left int
	if err := st.DB().Get(&left, `SELECT count(*) FROM endpoint_buckets WHERE endpoint_id = $1
		AND bucket_start >= $2`, sub.EndpointID, now.Add(-store.BucketRetention)); err != nil {
		t.Fatal(err)
	}
	if left != 3 {
		t.Fatalf("%d recent buckets left, want 3", left)
	}
	if n, err := st.PruneBuckets(ctx, now.Add(-store.BucketRetention)); err != nil || n != 0 {
		t.Fatalf("second prune deleted %d (%v)", n, err)
	}
}
