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
