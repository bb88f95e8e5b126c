package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestEndpointLeases: the concurrency cap counts leases not yet released
// or expired; the rate limit counts leases started within the period,
// released or not, and says when the oldest leaves it (issue 16).
func TestEndpointLeases(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/leases",
		EventTypes: []string{"lease"}, Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	ep := sub.EndpointID
	two, three := 2, 3
	if _, err := st.SetLimits(ctx, store.DefaultAccount, ep, store.Limits{MaxConcurrency: &two, RateLimit: &three, RateLimitPeriodSeconds: 2}); err != nil {
		t.Fatal(err)
	}
	acquire := func(holder string, ttl time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := st.Acquire(ctx, ep, holder, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	for i, want := range []bool{true, true, false} {
		if _, ok := acquire(fmt.Sprint("c", i), time.Minute); ok != want {
			t.Fatalf("lease %d: %v, want %v (cap 2)", i, ok, want)
		}
	}
	if _, ok := acquire("c0", time.Minute); !ok {
		t.Fatal("a holder taking its own lease again is refused")
	}
	if err := st.Release(ctx, ep, "c0"); err != nil {
		t.Fatal(err)
	}
	if _, ok := acquire("c2", time.Minute); !ok {
		t.Fatal("a released slot is not free")
	}
	if wait, ok := acquire("c3", time.Minute); ok || wait != 0 {
		t.Fatalf("two in progress under a cap of 2: ok %v, wait %v", ok, wait)
	}
	for _, h := range []string{"c1", "c2"} {
		if err := st.Release(ctx, ep, h); err != nil {
			t.Fatal(err)
		}
	}
	wait, ok := acquire("c3", time.Minute)
	if ok || wait <= 0 || wait > 2*time.Second {
		t.Fatalf("3 leases in 2 s, all released: ok %v, wait %v; want held back until the oldest leaves the period", ok, wait)
	}
	time.Sleep(wait + 100*time.Millisecond)
	if _, ok := acquire("c3", time.Minute); !ok {
		t.Fatal("still held back once the oldest lease left the period")
	}
	if _, err := st.SetLimits(ctx, store.DefaultAccount, ep, store.Limits{RateLimitPeriodSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok := acquire("c4", time.Minute); !ok {
		t.Fatal("held back with no limits")
	}
}
