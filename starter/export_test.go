package starter

import (
	"context"
	"time"
)

// ReconcileListed is, for the tests, the sweeper's reconciliation: Reconcile
// asking visibility first.
func (s *Starter) ReconcileListed(ctx context.Context, age time.Duration) error {
	return s.reconcile(ctx, age, true)
}

// Lease is, for the tests, the queue's leasing of what waits as of now.
func (q *Queue) Lease(ctx context.Context, now time.Time) { q.lease(ctx, now) }

// EndLeases is, for the tests, what the queue does with its leases as it
// stops.
func (q *Queue) EndLeases() { q.endLeases() }
