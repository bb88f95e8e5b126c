package starter

import (
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/store"
)

// TestTroubledEndpointIsPaced: a worker holds a batch 1/TroubledPerSecond
// for each of its deliveries of an endpoint in trouble while another
// endpoint's deliveries wait or were taken within busyWindow, and not at
// all once none were, nor for an endpoint not in trouble
// (docs/endpoints.md#isolation).
func TestTroubledEndpointIsPaced(t *testing.T) {
	now := time.Unix(0, 0)
	q := &Queue{Troubled: func(endpointID string) bool { return endpointID == "slow" }}
	q.init()
	q.wait.now = func() time.Time { return now }
	for _, d := range []store.Delivery{{ID: "s1", EndpointID: "slow"}, {ID: "s2", EndpointID: "slow"}, {ID: "h1", EndpointID: "healthy"}} {
		q.wait.put(queued{d: d})
	}
	slow := []queued{{d: store.Delivery{ID: "s1", EndpointID: "slow"}}, {d: store.Delivery{ID: "s2", EndpointID: "slow"}}}
	healthy := []queued{{d: store.Delivery{ID: "h1", EndpointID: "healthy"}}}
	perDefault := time.Second / DefaultTroubledPerSecond
	if got := q.pause(slow); got != 2*perDefault {
		t.Errorf("beside a delivery waiting: paused %v, want %v", got, 2*perDefault)
	}
	q.wait.take(3)
	q.TroubledPerSecond = 4
	if got := q.pause(slow); got != 500*time.Millisecond {
		t.Errorf("beside a delivery just taken, at 4 a second: paused %v, want 500ms", got)
	}
	if got := q.pause(healthy); got != 0 {
		t.Errorf("an endpoint not in trouble paused %v", got)
	}
	now = now.Add(busyWindow + time.Millisecond)
	if got := q.pause(slow); got != 0 {
		t.Errorf("alone: paused %v, want none", got)
	}
}

// TestLeaseComesBeforeTheSweeper: a delivery waiting in the queue is leased
// (at the latest leaseAfter+leaseEvery after it was queued) before the
// sweeper would start it (SweepGrace), and renewed before its lease ends.
func TestLeaseComesBeforeTheSweeper(t *testing.T) {
	if leaseAfter+leaseEvery >= SweepGrace {
		t.Errorf("leased after up to %v, swept after %v", leaseAfter+leaseEvery, SweepGrace)
	}
	if leaseEvery >= leaseFor/2 {
		t.Errorf("leases looked at every %v, renewed when %v is left", leaseEvery, leaseFor/2)
	}
}
