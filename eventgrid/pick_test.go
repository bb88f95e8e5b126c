package eventgrid_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/eventgrid"
)

// TestPick: one request carries at most maxEventsPerBatch events within the
// preferred size, and an event larger than it goes alone
// (docs/policies.md#iot-edge-output-batching).
func TestPick(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		sizes           []int
		maxEvents, maxB int
		wantN           int
		wantFull        bool
	}{
		{"count bound", []int{1, 1, 1, 1}, 3, 0, 3, true},
		{"fewer than a batch", []int{1, 1}, 3, 0, 2, false},
		{"exactly a batch", []int{1, 1, 1}, 3, 0, 3, true},
		{"size bound", []int{400, 400, 400}, 10, 1000, 2, true},
		{"large first goes alone", []int{5000, 1}, 10, 1000, 1, true},
		{"nothing waiting", nil, 10, 1000, 0, false},
	}
	for _, c := range cases {
		n, full := eventgrid.Pick(c.sizes, c.maxEvents, c.maxB)
		if n != c.wantN || full != c.wantFull {
			t.Errorf("%s: Pick = %d, %v; want %d, %v", c.name, n, full, c.wantN, c.wantFull)
		}
	}
}
