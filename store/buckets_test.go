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

// TestReenabledWindowStartsThen: issue 53, item 9. An endpoint enabled again
// counts its failure-rate window from that moment, not from the start of
// that minute: the attempts its minute's bucket held when it was re-enabled
// do not count, those after do.
func TestReenabledWindowStartsThen(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/reenabled",
		EventTypes: []string{"reenable.test"}, Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	minute := time.Now().Truncate(time.Minute).Add(-time.Hour)
	add := func(attempts, failures int) {
		t.Helper()
		if _, err := st.DB().Exec(`INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
			VALUES ($1, $2, $3, $4) ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
			attempts = endpoint_buckets.attempts + $3, failures = endpoint_buckets.failures + $4`,
			sub.EndpointID, minute, attempts, failures); err != nil {
			t.Fatal(err)
		}
	}
	add(5, 5) // the failures that disabled it, early in the minute
	change := func(from, to string, restart bool) {
		t.Helper()
		c, err := st.ChangeEndpointState(ctx, store.ChangeState{EndpointID: sub.EndpointID, From: from, To: to,
			Reason: "test", At: minute.Add(30 * time.Second), Restart: restart})
		if err != nil || !c.Changed {
			t.Fatalf("%s -> %s: %+v %v", from, to, c, err)
		}
	}
	change("enabled", "disabled", false)
	change("disabled", "enabled", true)
	add(2, 1) // after it was enabled again, in the same minute
	h, err := st.EndpointHealth(ctx, sub.EndpointID, 24*time.Hour, minute.Add(50*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if h.WindowAttempts != 2 || h.WindowFailures != 1 {
		t.Fatalf("window after re-enabling: %d attempts, %d failures; want 2, 1", h.WindowAttempts, h.WindowFailures)
	}
	minute = minute.Add(time.Minute)
	add(3, 3) // the next minute counts whole
	if h, err = st.EndpointHealth(ctx, sub.EndpointID, 24*time.Hour, minute.Add(time.Second)); err != nil ||
		h.WindowAttempts != 5 || h.WindowFailures != 4 {
		t.Fatalf("window a minute later: %+v %v; want 5 attempts, 4 failures", h, err)
	}
}
