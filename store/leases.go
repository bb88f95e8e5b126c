package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// LeaseStarts tells the sweeper that these deliveries, not yet started,
// are waiting in a start queue that will start them: it leaves them alone
// (UnstartedDeliveries) for d from now, or longer where a failed start put
// them off further (StartFailed). A queue that paces an endpoint's starts
// (starter.Queue) holds deliveries longer than the sweeper's grace; without
// the lease the sweeper would start them unpaced. A process that stops
// without ending its leases (EndLeases) leaves them to the sweeper once d
// has passed. Rows a start holds are skipped (they are being started), as
// MarkStarted skips them.
func (s *Store) LeaseStarts(ctx context.Context, ids []string, d time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `UPDATE deliveries
		SET next_start_at = GREATEST(next_start_at, now() + $2 * interval '1 millisecond')
		WHERE id IN (SELECT id FROM deliveries WHERE id = ANY($1) AND NOT started FOR NO KEY UPDATE SKIP LOCKED)`,
		pq.StringArray(ids), d.Milliseconds())
	if err != nil {
		return fmt.Errorf("store: lease starts: %w", err)
	}
	return nil
}

// EndLeases hands these deliveries, leased by a start queue that stops
// before starting them (LeaseStarts), back to the sweeper at once. Those
// a failed start put off (start_attempts) keep their back-off.
func (s *Store) EndLeases(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `UPDATE deliveries SET next_start_at = NULL
		WHERE id = ANY($1) AND NOT started AND start_attempts = 0 AND next_start_at IS NOT NULL`, pq.StringArray(ids))
	if err != nil {
		return fmt.Errorf("store: end leases: %w", err)
	}
	return nil
}
