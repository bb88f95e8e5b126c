package starter

import (
	"slices"
	"testing"
	"time"
)

// TestShare: a worker takes an even share of what waits, at least one and
// at most queueBatch, so that no worker is left starting a long batch
// alone once the queue runs dry.
func TestShare(t *testing.T) {
	for _, c := range []struct{ waiting, workers, want int }{
		{1, 16, 1}, {16, 16, 1}, {17, 16, 2}, {40, 16, 3}, {100, 16, queueBatch}, {5000, 16, queueBatch}, {3, 1, 3},
	} {
		if got := share(c.waiting, c.workers); got != c.want {
			t.Errorf("share(%d waiting, %d workers) = %d, want %d", c.waiting, c.workers, got, c.want)
		}
	}
}

// TestHolders: one endpoint's deliveries are started by PerEndpoint
// workers at once (DefaultStartsPerEndpoint unless set), never by all but
// freeWorkers of them, and a queue too small to leave any free is not
// bounded.
func TestHolders(t *testing.T) {
	for _, c := range []struct{ workers, perEndpoint, want int }{
		{16, 0, DefaultStartsPerEndpoint}, {16, 8, 8}, {16, 20, 16 - freeWorkers}, {3, 0, 1}, {2, 4, 0}, {1, 0, 0},
	} {
		if got := holders(c.workers, c.perEndpoint); got != c.want {
			t.Errorf("holders(%d workers, %d per endpoint) = %d, want %d", c.workers, c.perEndpoint, got, c.want)
		}
	}
}

// TestStartBounds: a burst alone may be started by every worker but
// freeWorkers, beside others by PerEndpoint of them
// (DefaultStartsPerEndpoint unless set).
func TestStartBounds(t *testing.T) {
	for _, c := range []struct{ workers, perEndpoint, alone, beside int }{
		{16, 0, 16 - freeWorkers, DefaultStartsPerEndpoint}, {16, 4, 16 - freeWorkers, 4}, {4, 8, 2, 2}, {2, 0, 0, 0},
	} {
		if alone, beside := startBounds(c.workers, c.perEndpoint); alone != c.alone || beside != c.beside {
			t.Errorf("startBounds(%d workers, %d per endpoint) = %d alone, %d beside; want %d, %d",
				c.workers, c.perEndpoint, alone, beside, c.alone, c.beside)
		}
	}
}

// TestMarksTakeDue: the marks due by a time are taken in the order handed
// over, the later ones left waiting.
func TestMarksTakeDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := &marks{pending: []mark{{"a", t0}, {"b", t0.Add(time.Second)}, {"c", t0.Add(2 * time.Second)}}}
	if got := m.takeDue(t0.Add(time.Second)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("due at 1s: %v, want [a b]", got)
	}
	if got := m.takeDue(t0.Add(time.Second)); len(got) != 0 {
		t.Errorf("due again at 1s: %v, want none", got)
	}
	if len(m.pending) != 1 || m.pending[0].id != "c" {
		t.Errorf("left waiting: %v, want c", m.pending)
	}
}
