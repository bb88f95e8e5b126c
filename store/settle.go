package store

import (
	"context"
	"fmt"
	"time"
)

// OpenAttempt is an attempts row still open (error kind in_flight) long
// after its request went out: its outcome was never recorded.
type OpenAttempt struct {
	// Row is the attempts row's id, for CompleteAttempts.
	Row        int64     `db:"id"`
	DeliveryID string    `db:"delivery_id"`
	WorkflowID string    `db:"workflow_id"`
	EndpointID string    `db:"endpoint_id"`
	StartedAt  time.Time `db:"started_at"`
}

// OpenAttempts lists at most limit first attempts (attempt 0) whose rows
// have been open for longer than age and whose delivery has not ended,
// newest first: those a worker stopped before it recorded their outcome,
// or whose workflow has yet to try again. The endpoint is the
// subscription's current one, the one the attempt posted to (Target).
func (s *Store) OpenAttempts(ctx context.Context, age time.Duration, limit int) ([]OpenAttempt, error) {
	out := []OpenAttempt{}
	err := s.db.SelectContext(ctx, &out, `SELECT a.id, a.delivery_id, d.workflow_id, s.endpoint_id, a.started_at
		FROM attempts a
		JOIN deliveries d ON d.id = a.delivery_id
		JOIN subscriptions s ON s.id = d.subscription_id
		WHERE a.error_kind = $1 AND a.attempt = 0 AND a.started_at < now() - $2 * interval '1 microsecond'
			AND d.status NOT IN `+finalSQL+`
		ORDER BY a.started_at DESC LIMIT $3`, KindInFlight, age.Microseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: open attempts: %w", err)
	}
	return out, nil
}
