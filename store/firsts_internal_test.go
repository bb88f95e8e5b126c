package store

import (
	"testing"
	"time"
)

// TestFirstAttemptsBounded: FirstAttempts holds no more event bytes than
// its bound (a publish that finds no room opens nothing), gives them back
// as entries are taken, and drops entries not taken within its TTL.
func TestFirstAttemptsBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f := NewFirstAttempts()
	f.max, f.now = 3000, func() time.Time { return now }
	if !f.reserve(2000) || f.reserve(2000) {
		t.Fatal("reserved past the bound")
	}
	f.put(Target{DeliveryID: "dlv_a", URL: "http://127.0.0.1:1/a"}, 2000)
	if tg, ok := f.take("dlv_a"); !ok || tg.URL != "http://127.0.0.1:1/a" || f.bytes != 0 {
		t.Fatalf("take: %+v, %v, %d bytes held; want dlv_a's target and none held", tg, ok, f.bytes)
	}
	if _, ok := f.take("dlv_a"); ok {
		t.Fatal("taken twice")
	}
	if !f.reserve(2000) {
		t.Fatal("no room once taken")
	}
	f.put(Target{DeliveryID: "dlv_b"}, 2000)
	now = now.Add(f.ttl + time.Second)
	if !f.reserve(3000) || f.Len() != 0 || len(f.order) != 0 {
		t.Fatalf("after the TTL: %d held, %d ordered, %d bytes; want the entry dropped", f.Len(), len(f.order), f.bytes)
	}
	if _, ok := f.take("dlv_b"); ok {
		t.Fatal("an expired entry was taken")
	}
}
