package store

import (
	"testing"
	"time"
)

// TestFirstAttemptsBounded: FirstAttempts holds no more event bytes than
// its bound (a publish that finds no room opens nothing), gives them back
// as entries are taken, and drops entries not taken within its TTL,
// remembering their rows as unsent; an entry taken leaves nothing unsent.
func TestFirstAttemptsBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f := NewFirstAttempts()
	f.max, f.now = 3000, func() time.Time { return now }
	if !f.reserve(2000) || f.reserve(2000) {
		t.Fatal("reserved past the bound")
	}
	f.put(firstAttempt{t: Target{DeliveryID: "dlv_a", URL: "http://127.0.0.1:1/a"}, bytes: 2000, row: 7, wf: "wf_a"})
	if fa, ok := f.take("dlv_a"); !ok || fa.t.URL != "http://127.0.0.1:1/a" || fa.row != 7 || f.bytes != 0 {
		t.Fatalf("take: %+v, %v, %d bytes held; want dlv_a's target and row, none held", fa, ok, f.bytes)
	}
	if _, ok := f.take("dlv_a"); ok {
		t.Fatal("taken twice")
	}
	if !f.reserve(2000) {
		t.Fatal("no room once taken")
	}
	f.put(firstAttempt{t: Target{DeliveryID: "dlv_b"}, bytes: 2000, row: 8, opened: now, wf: "wf_b"})
	now = now.Add(f.ttl + time.Second)
	if !f.reserve(3000) || f.Len() != 0 || len(f.order) != 0 {
		t.Fatalf("after the TTL: %d held, %d ordered, %d bytes; want the entry dropped", f.Len(), len(f.order), f.bytes)
	}
	if _, ok := f.take("dlv_b"); ok {
		t.Fatal("an expired entry was taken")
	}
	if ds, at := f.unsent.of(nil); len(ds) != 1 || ds[0] != "dlv_b" || at[0] != now.Add(-f.ttl-time.Second).Format(time.RFC3339Nano) {
		t.Fatalf("unsent after the TTL: %v %v; want dlv_b's row only", ds, at)
	}
}

// TestFirstAttemptsNotEager: a start that was not eager drops its
// delivery's entry, by workflow id, and remembers its row as unsent; one
// whose entry was taken already, or of another workflow, changes nothing.
func TestFirstAttemptsNotEager(t *testing.T) {
	f := NewFirstAttempts()
	opened := time.Unix(2_000_000, 0)
	f.put(firstAttempt{t: Target{DeliveryID: "dlv_a"}, row: 1, opened: opened, wf: "wf_a"})
	f.put(firstAttempt{t: Target{DeliveryID: "dlv_b"}, row: 2, opened: opened, wf: "wf_b"})
	if _, ok := f.take("dlv_b"); !ok {
		t.Fatal("dlv_b not handed over")
	}
	f.NotEager("wf_b")
	f.NotEager("wf_other")
	if ds, _ := f.unsent.of(nil); len(ds) != 0 || f.Len() != 1 {
		t.Fatalf("unsent %v, %d held; want none unsent, dlv_a held", ds, f.Len())
	}
	f.NotEager("wf_a")
	if ds, at := f.unsent.of(nil); len(ds) != 1 || ds[0] != "dlv_a" || at[0] != opened.Format(time.RFC3339Nano) || f.Len() != 0 {
		t.Fatalf("unsent %v %v, %d held; want dlv_a's row unsent, none held", ds, at, f.Len())
	}
	if _, ok := f.take("dlv_a"); ok {
		t.Fatal("a dropped entry was taken")
	}
}
