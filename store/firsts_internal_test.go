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
	f.put(Target{DeliveryID: "dlv_a"}, 7, 2000)
	if _, row, ok := f.take("dlv_a"); !ok || row != 7 || f.bytes != 0 {
		t.Fatalf("take: row %d, %v, %d bytes held; want row 7 and none held", row, ok, f.bytes)
	}
	if _, _, ok := f.take("dlv_a"); ok {
		t.Fatal("taken twice")
	}
	if !f.reserve(2000) {
		t.Fatal("no room once taken")
	}
	f.put(Target{DeliveryID: "dlv_b"}, 8, 2000)
	now = now.Add(f.ttl + time.Second)
	if !f.reserve(3000) || f.Len() != 0 || len(f.order) != 0 {
		t.Fatalf("after the TTL: %d held, %d ordered, %d bytes; want the entry dropped", f.Len(), len(f.order), f.bytes)
	}
	if _, _, ok := f.take("dlv_b"); ok {
		t.Fatal("an expired entry was taken")
	}
}
