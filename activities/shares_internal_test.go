package activities

import "testing"

// TestShares: an endpoint takes at most its share, the process at most its
// total, and what is given back can be taken again.
func TestShares(t *testing.T) {
	s := NewShares(2, 3)
	steps := []struct {
		endpoint string
		want     bool
	}{{"a", true}, {"a", true}, {"a", false}, {"b", true}, {"b", false}, {"c", false}}
	for i, st := range steps {
		if got := s.take(st.endpoint); got != st.want {
			t.Fatalf("step %d: take(%s) = %v, want %v", i, st.endpoint, got, st.want)
		}
	}
	s.done("a")
	if !s.take("c") || s.take("a") {
		t.Fatal("after a gave one back: c should take it, then a nothing")
	}
	if n := s.InFlight("a"); n != 1 {
		t.Fatalf("a in flight %d, want 1", n)
	}
	var none *Shares
	if !none.take("x") {
		t.Fatal("a nil Shares must bound nothing")
	}
}
