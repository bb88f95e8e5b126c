package starter

import (
	"fmt"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
)

// TestFairServesEndpointsInTurn: a burst for one endpoint does not hold back
// a delivery to another queued after it: batches take the endpoints in turn.
func TestFairServesEndpointsInTurn(t *testing.T) {
	f := newFair(10)
	f.burst = 0 // every line a burst: a batch takes several of one
	for _, id := range []string{"b1", "b2", "b3", "b4", "a1", "c1", "a2"} {
		if !f.put(queued{d: store.Delivery{ID: id, EndpointID: id[:1]}}) {
			t.Fatalf("put %s refused", id)
		}
	}
	var got []string
	for _, n := range []int{3, 2, 5} {
		for _, it := range f.take(n) {
			got = append(got, it.d.ID)
		}
	}
	want := []string{"b1", "a1", "c1", "b2", "a2", "b3", "b4"}
	if len(got) != len(want) {
		t.Fatalf("took %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("took %v, want %v", got, want)
		}
	}
	if f.len() != 0 || len(f.take(1)) != 0 {
		t.Fatal("queue not empty after taking everything")
	}
}

// TestFairIsBounded: a full queue refuses more.
func TestFairIsBounded(t *testing.T) {
	f := newFair(2)
	f.put(queued{d: store.Delivery{ID: "1", EndpointID: "a"}})
	f.put(queued{d: store.Delivery{ID: "2", EndpointID: "b"}})
	if f.put(queued{d: store.Delivery{ID: "3", EndpointID: "c"}}) {
		t.Fatal("a full queue took a third delivery")
	}
}

// TestFairLeavesTakersFree: with maxHolders, an endpoint's deliveries are
// not taken by more takers at once than that, so a delivery of another
// endpoint finds a taker free; a release lets the endpoint be taken again.
func TestFairLeavesTakersFree(t *testing.T) {
	f := newFair(10)
	f.burst = 0
	f.bound(1, 0, 0, nil)
	for _, id := range []string{"a1", "a2", "a3", "b1"} {
		f.put(queued{d: store.Delivery{ID: id, EndpointID: id[:1]}})
	}
	first := f.take(2) // a1, b1: one taker holds both endpoints
	if len(first) != 2 || first[0].d.ID != "a1" || first[1].d.ID != "b1" {
		t.Fatalf("first take %v, want a1 b1", ids(first))
	}
	if got := f.take(2); len(got) != 0 {
		t.Fatalf("second taker took %v while a is held by the first", ids(got))
	}
	f.release(first)
	select {
	case <-f.ready:
	default:
		t.Fatal("release left no token though a waits")
	}
	if got := f.take(4); len(got) != 2 || got[0].d.ID != "a2" || got[1].d.ID != "a3" {
		t.Fatalf("after release took %v, want a2 a3", ids(got))
	}
}

// TestFairSlowsFailingEndpoints: a failing endpoint's deliveries are taken
// by troubledHolders takers at once, however many maxHolders allows, while
// another endpoint's are taken by several; once it answers again, several
// take it too.
func TestFairSlowsFailingEndpoints(t *testing.T) {
	failing := map[string]bool{"d": true}
	f := troubledFair(3, failing)
	putLine(f, "d", 4)
	putLine(f, "h", 4)
	first := f.take(2) // d0, h0
	second := f.take(2)
	if fmt.Sprint(ids(first), ids(second)) != "[d0 h0] [h1 h2]" {
		t.Fatalf("takes %v, %v: want d0 h0, then h1 h2 (d failing, held once)", ids(first), ids(second))
	}
	failing["d"] = false
	if got := f.take(2); fmt.Sprint(ids(got)) != "[d1 h3]" {
		t.Fatalf("once d answers: took %v, want d1 h3", ids(got))
	}
}

// TestFairSpreadsShortLines: an endpoint whose line is short (a healthy
// one, keeping up) gives each taker one delivery and may be held by up to
// shortHolders takers, while one whose line is a burst is held by at most
// maxHolders, each taking several.
func TestFairSpreadsShortLines(t *testing.T) {
	if got, want := burstAndShortLine(2, 0, 6), "[[b0 h0 b1 b2] [h1 b3 b4 b5] [h2]]"; got != want {
		t.Fatalf("takes %s, want %s (b held twice at most, h once per take)", got, want)
	}
}

// TestFairLeavesShortLinesWholeBeside: while a burst is held by
// besideHolders takers because another endpoint is being started, that
// other endpoint, whose line is short, may still be held by shortHolders,
// one delivery each: a healthy endpoint's starts beside a burst go side by
// side.
func TestFairLeavesShortLinesWholeBeside(t *testing.T) {
	if got, want := burstAndShortLine(6, 1, 6), "[[b0 h0 b1 b2] [h1] [h2]]"; got != want {
		t.Fatalf("takes %s, want %s (b held once beside h, h once per take)", got, want)
	}
}

// burstAndShortLine queues a burst, "b" with 10 deliveries, and a short
// line, "h" with 3, in a queue whose lines of more than 3 are bursts,
// bounded by maxHolders, besideHolders and shortHolders, and lists three
// takes of up to 4 deliveries, none released.
func burstAndShortLine(maxHolders, besideHolders, shortHolders int) string {
	f := newFair(20)
	f.burst = 3
	f.bound(maxHolders, besideHolders, shortHolders, nil)
	putLine(f, "b", 10)
	putLine(f, "h", 3)
	var takes []string
	for range 3 {
		takes = append(takes, fmt.Sprint(ids(f.take(4))))
	}
	return fmt.Sprint(takes)
}

// troubledFair is a queue of 20 whose every line is a burst, each endpoint
// held by at most maxHolders takers, the endpoints in troubled in trouble.
func troubledFair(maxHolders int, troubled map[string]bool) *fair {
	f := newFair(20)
	f.burst = 0
	f.bound(maxHolders, 0, 0, func(key string) bool { return troubled[key] })
	return f
}

// putLine queues n deliveries of the endpoint, its id and a number each
// ("d0", "d1", ...).
func putLine(f *fair, endpoint string, n int) {
	for i := range n {
		f.put(queued{d: store.Delivery{ID: fmt.Sprint(endpoint, i), EndpointID: endpoint}})
	}
}

func ids(qs []queued) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.d.ID
	}
	return out
}

// TestFairTakesOneOfATroubledEndpoint: a batch holds one delivery of an
// endpoint in trouble, however long its line, and several of one that is
// not, so that a troubled endpoint's paced starts go out one at a time.
func TestFairTakesOneOfATroubledEndpoint(t *testing.T) {
	troubled := map[string]bool{"s": true}
	f := troubledFair(4, troubled)
	putLine(f, "s", 6)
	first := f.take(4)
	if got := fmt.Sprint(ids(first)); got != "[s0]" {
		t.Fatalf("troubled: took %s, want [s0]", got)
	}
	f.release(first)
	troubled["s"] = false
	if got := fmt.Sprint(ids(f.take(4))); got != "[s1 s2 s3 s4]" {
		t.Fatalf("once it answers: took %s, want [s1 s2 s3 s4]", got)
	}
}

// TestFairBoundsABurstBeside: a burst is held by maxHolders takers while
// it is alone, by besideHolders while another endpoint's deliveries wait
// or were taken within busyWindow, and by maxHolders again after that.
func TestFairBoundsABurstBeside(t *testing.T) {
	now := time.Unix(0, 0)
	var f *fair
	burst := func() {
		f = newFair(40)
		f.burst, f.now = 0, func() time.Time { return now }
		f.bound(4, 2, 0, nil)
		putLine(f, "b", 20)
	}
	burst()
	takeAll := func() (got []string) {
		for batch := f.take(1); len(batch) > 0; batch = f.take(1) {
			got = append(got, ids(batch)...)
		}
		return got
	}
	if got := takeAll(); fmt.Sprint(got) != "[b0 b1 b2 b3]" {
		t.Fatalf("alone: took %v, want b0-b3 (held by 4)", got)
	}
	burst()
	putLine(f, "h", 1)
	if got := takeAll(); fmt.Sprint(got) != "[b0 h0 b1]" {
		t.Fatalf("beside h: took %v, want b0 h0 b1 (b held by 2)", got)
	}
	now = now.Add(busyWindow + time.Millisecond)
	if got := takeAll(); fmt.Sprint(got) != "[b2 b3]" {
		t.Fatalf("once h is not being started: took %v, want b2 b3", got)
	}
}
