package starter

import "testing"

// TestShare: a worker takes an even share of what waits, at least one and
// at most queueBatch, so that no worker is left starting a long batch
// alone once the queue runs dry.
func TestShare(t *testing.T) {
	for _, c := range []struct{ waiting, workers, want int }{
		{1, 16, 1}, {16, 16, 1}, {17, 16, 2}, {100, 16, 7}, {512, 16, 32}, {5000, 16, queueBatch}, {3, 1, 3},
	} {
		if got := share(c.waiting, c.workers); got != c.want {
			t.Errorf("share(%d waiting, %d workers) = %d, want %d", c.waiting, c.workers, got, c.want)
		}
	}
}
