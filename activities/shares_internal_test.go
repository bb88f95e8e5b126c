package activities

import (
	"testing"
	"time"
)

// TestShares: an endpoint takes at most its share, the process at most its
// total, and what is given back can be taken again.
func TestShares(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(2, 3)
	s.now = func() time.Time { return now }
	var first *slot
	take := func(e string) bool {
		sl, ok := s.take(e)
		if first == nil {
			first = sl
		}
		return ok
	}
	steps := []struct {
		endpoint string
		want     bool
	}{{"a", true}, {"a", true}, {"a", false}, {"b", true}, {"b", false}, {"c", false}}
	for i, st := range steps {
		if got := take(st.endpoint); got != st.want {
			t.Fatalf("step %d: take(%s) = %v, want %v", i, st.endpoint, got, st.want)
		}
	}
	s.done("a", first, false)
	if !take("c") || take("a") {
		t.Fatal("after a gave one back: c should take it, then a nothing")
	}
	if n := s.inFlight("a"); n != 1 {
		t.Fatalf("a in flight %d, want 1", n)
	}
	var none *Shares
	if _, ok := none.take("x"); !ok {
		t.Fatal("a nil Shares must bound nothing")
	}
}

// TestSlowEndpointHandsOver: an endpoint with a local first attempt open
// for slowAfter hands every first attempt over, until slowFor after the
// last slow one; another endpoint is not affected.
func TestSlowEndpointHandsOver(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(10, 10)
	s.now = func() time.Time { return now }
	sl, ok := s.take("slow")
	if !ok {
		t.Fatal("first take refused")
	}
	now = now.Add(slowAfter)
	if _, ok := s.take("slow"); !ok {
		t.Fatal("slow before its request went out (the wait for PostgreSQL is not the receiver's)")
	}
	answered := s.sending(sl)
	now = now.Add(slowAfter)
	if _, ok := s.take("slow"); ok {
		t.Fatal("a slow endpoint took a local first attempt")
	}
	if _, ok := s.take("fast"); !ok {
		t.Fatal("another endpoint was refused")
	}
	answered()
	s.done("slow", sl, false)
	now = now.Add(slowFor - time.Second)
	if _, ok := s.take("slow"); ok {
		t.Fatal("still slow within slowFor of its last slow attempt")
	}
	now = now.Add(time.Second)
	if _, ok := s.take("slow"); !ok {
		t.Fatal("not taken after slowFor")
	}
}

// TestFailingEndpoint: an endpoint whose last local first attempt failed is
// in trouble for failingFor, or until one succeeds; another endpoint is
// not, nor is anything for a nil Shares.
func TestFailingEndpoint(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(10, 10)
	s.now = func() time.Time { return now }
	attempt := func(e string, failed bool) {
		sl, ok := s.take(e)
		if !ok {
			t.Fatalf("take(%s) refused", e)
		}
		s.done(e, sl, failed)
	}
	attempt("down", true)
	attempt("up", false)
	if !s.Troubled("down") || s.Troubled("up") {
		t.Fatal("after one failure each way: want down failing, up not")
	}
	now = now.Add(failingFor - time.Second)
	if !s.Troubled("down") {
		t.Fatal("not failing within failingFor of its failure")
	}
	now = now.Add(time.Second)
	if s.Troubled("down") {
		t.Fatal("still failing failingFor after its failure")
	}
	attempt("down", true)
	attempt("down", false)
	if s.Troubled("down") {
		t.Fatal("failing after a success")
	}
	var none *Shares
	if none.Troubled("down") {
		t.Fatal("a nil Shares must call nothing failing")
	}
}

// TestSlowEndpointIsTroubled: an endpoint is in trouble as soon as the
// request of a local first attempt of it has been out for slowAfter, before
// it ends, and for slowFor after it ends; one whose receiver answers quickly
// is not, however long the attempt took around its request.
func TestSlowEndpointIsTroubled(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(10, 10)
	s.now = func() time.Time { return now }
	held, _ := s.take("held")
	quick, _ := s.take("quick")
	heldAnswered := s.sending(held)
	now = now.Add(slowAfter - time.Millisecond)
	quickAnswered := s.sending(quick)
	now = now.Add(10 * time.Millisecond)
	quickAnswered()
	s.done("quick", quick, false)
	now = now.Add(-10 * time.Millisecond)
	if s.Troubled("held") || s.Troubled("quick") {
		t.Fatal("in trouble before any request was out for slowAfter")
	}
	now = now.Add(time.Millisecond)
	if !s.Troubled("held") {
		t.Fatal("not in trouble with a request out for slowAfter")
	}
	if s.Troubled("quick") {
		t.Fatal("in trouble for an attempt that waited slowAfter before its request")
	}
	heldAnswered()
	s.done("held", held, false)
	now = now.Add(slowFor - time.Second)
	if !s.Troubled("held") {
		t.Fatal("not in trouble within slowFor of its slow attempt")
	}
	now = now.Add(2 * time.Second)
	if s.Troubled("held") {
		t.Fatal("still in trouble slowFor after its slow attempt")
	}
}

// TestFullShareHeldIsSlow: an endpoint whose whole share of local first
// attempts has had its requests out for fullSlowAfter is in trouble
// (slow), without waiting for slowAfter; one with fewer held, or held for
// less, or whose requests were answered and whose attempts are only being
// recorded, is not.
func TestFullShareHeldIsSlow(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(2, 10)
	s.now = func() time.Time { return now }
	for _, ep := range []string{"burst", "burst", "one", "answered", "answered"} {
		sl, ok := s.take(ep)
		if !ok {
			t.Fatalf("%s: share refused", ep)
		}
		answered := s.sending(sl)
		if ep == "answered" {
			answered()
		}
	}
	now = now.Add(fullSlowAfter - time.Millisecond)
	if s.Troubled("burst") {
		t.Fatal("in trouble before its share was held for fullSlowAfter")
	}
	now = now.Add(time.Millisecond)
	if !s.Troubled("burst") {
		t.Fatal("not in trouble with its whole share held for fullSlowAfter")
	}
	if s.Troubled("one") {
		t.Fatal("in trouble with one request of a share of two out for fullSlowAfter")
	}
	if s.Troubled("answered") {
		t.Fatal("in trouble for answered requests whose attempts are being recorded")
	}
	if _, ok := s.take("burst"); ok {
		t.Fatal("a slow endpoint took a local first attempt")
	}
}

// TestQuickAnswerEndsTrouble: an endpoint slow and failing is out of trouble
// once an attempt made outside its share succeeds within slowAfter;
// a failure, or a success that took slowAfter, leaves it in trouble.
func TestQuickAnswerEndsTrouble(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewShares(10, 10)
	s.now = func() time.Time { return now }
	sl, _ := s.take("ep")
	s.sending(sl)
	now = now.Add(slowAfter)
	s.done("ep", sl, true)
	for _, c := range []struct {
		success bool
		took    time.Duration
	}{{false, time.Millisecond}, {true, slowAfter}} {
		s.answered("ep", c.success, c.took)
		if !s.Troubled("ep") {
			t.Fatalf("out of trouble after an answer (success %v) in %v", c.success, c.took)
		}
	}
	s.answered("other", true, time.Millisecond)
	if !s.Troubled("ep") {
		t.Fatal("out of trouble after another endpoint's answer")
	}
	s.answered("ep", true, slowAfter-time.Millisecond)
	if s.Troubled("ep") {
		t.Fatal("still in trouble after a success answered within slowAfter")
	}
	if _, ok := s.take("ep"); !ok {
		t.Fatal("a first attempt still handed over after a quick success")
	}
	var none *Shares
	none.answered("ep", true, 0)
}
