package activities

import (
	"fmt"
	"testing"
	"time"
)

// TestHealthGatePrunes: once the gate holds gateMaxEntries endpoints, entries
// older than gateMaxAge are dropped and recent ones kept.
func TestHealthGatePrunes(t *testing.T) {
	t.Parallel()
	var g healthGate
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < gateMaxEntries; i++ {
		at := start
		if i%2 == 0 {
			at = start.Add(gateMaxAge) // recent at the end
		}
		g.mark(&g.signalled, fmt.Sprint(i), at)
		g.cacheHealth(fmt.Sprint(i), cachedHealth{at: at})
	}
	end := start.Add(gateMaxAge + time.Second)
	if !g.allow(&g.summed, "x", end, time.Second) || g.allow(&g.summed, "x", end, time.Second) {
		t.Fatal("allow does not rate-limit")
	}
	g.mark(&g.signalled, "new", end)
	g.cacheHealth("new", cachedHealth{at: end})
	want := gateMaxEntries/2 + 1
	if len(g.signalled) != want || len(g.rules) != want {
		t.Fatalf("kept %d signalled, %d rules; want %d", len(g.signalled), len(g.rules), want)
	}
	if _, ok := g.signalled["0"]; !ok {
		t.Fatal("a recent entry was dropped")
	}
	if g.due(&g.signalled, "new", end, signalEvery) || !g.due(&g.signalled, "1", end, signalEvery) {
		t.Fatal("due is wrong")
	}
}
