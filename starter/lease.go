package starter

import (
	"context"
	"time"
)

// A queue leases the deliveries that wait in it long from the sweeper
// (store.LeaseStarts), which otherwise starts every delivery unstarted
// after SweepGrace, unpaced: an endpoint in trouble, started at
// TroubledPerSecond, has deliveries waiting here for minutes
// (docs/endpoints.md#isolation).
const (
	// leaseFor is how long a lease lasts: a process that stops without
	// ending its leases (a crash) leaves their deliveries to the sweeper
	// once they run out.
	leaseFor = 2 * time.Minute
	// leaseAfter is how long a delivery waits before it is leased, and
	// leaseEvery how often the queue looks: a delivery is leased before
	// it has waited both, less than SweepGrace, and its lease is renewed
	// once less than half of it is left.
	leaseAfter = 10 * time.Second
	leaseEvery = 10 * time.Second
	// endLeasesTimeout bounds ending the leases as the queue stops.
	endLeasesTimeout = 5 * time.Second
)

// lease leases the deliveries that have waited leaseAfter by now and have
// no lease, or one with less than half of leaseFor left.
func (q *Queue) lease(ctx context.Context, now time.Time) {
	ids := q.wait.leaseDue(now.Add(-leaseAfter), now.Add(leaseFor/2), now.Add(leaseFor))
	if len(ids) == 0 {
		return
	}
	if err := q.Starter.Store.LeaseStarts(ctx, ids, leaseFor); err != nil {
		q.wait.unlease(ids)
		q.Starter.Logger.WarnContext(ctx, "start_leases_failed", "count", len(ids), "error", err)
	}
}

// endLeases hands the leased deliveries still waiting back to the sweeper,
// as the queue stops (store.EndLeases).
func (q *Queue) endLeases() {
	ids := q.wait.leasedIDs()
	ctx, cancel := context.WithTimeout(context.Background(), endLeasesTimeout)
	defer cancel()
	if err := q.Starter.Store.EndLeases(ctx, ids); err != nil {
		q.Starter.Logger.WarnContext(ctx, "start_leases_not_ended", "count", len(ids), "error", err)
	}
}

// leaseDue gives the deliveries queued by waited whose lease ends before
// renewBy (none: zero) a lease until until, and returns their ids.
func (f *fair) leaseDue(waited, renewBy, until time.Time) []string {
	var ids []string
	f.each(func(it *queued) {
		if !it.at.After(waited) && it.leased.Before(renewBy) {
			it.leased = until
			ids = append(ids, it.d.ID)
		}
	})
	return ids
}

// unlease drops the lease of those of ids still waiting (LeaseStarts
// failed): the next walk leases them again.
func (f *fair) unlease(ids []string) {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	f.each(func(it *queued) {
		if set[it.d.ID] {
			it.leased = time.Time{}
		}
	})
}

// leasedIDs is the ids of the deliveries waiting with a lease.
func (f *fair) leasedIDs() []string {
	var ids []string
	f.each(func(it *queued) {
		if !it.leased.IsZero() {
			ids = append(ids, it.d.ID)
		}
	})
	return ids
}

// each calls fn, under f.mu, with every delivery waiting.
func (f *fair) each(fn func(it *queued)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, line := range f.lines {
		for i := range line {
			fn(&line[i])
		}
	}
}
