package store

import (
	"context"
	"fmt"
	"time"
)

// Backlog is how far behind deliveries are: those still pending (no first
// attempt has ended yet: not started, waiting in Temporal, being tried, or
// held for an Event Grid handshake), those of them whose workflow was not
// started yet, and the age of the oldest pending one.
type Backlog struct {
	Pending         int        `db:"pending" json:"pending"`
	Unstarted       int        `db:"unstarted" json:"unstarted"`
	OldestPendingAt *time.Time `db:"oldest_pending_at" json:"oldest_pending_at"`
	LagSeconds      float64    `db:"lag_seconds" json:"lag_seconds"`
}

const backlogSelect = `SELECT count(*) AS pending, count(*) FILTER (WHERE NOT started) AS unstarted,
		min(created_at) AS oldest_pending_at,
		COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS lag_seconds
	FROM deliveries WHERE status = 'pending'`

// Backlog is the backlog of one account's deliveries.
func (s *Store) Backlog(ctx context.Context, account string) (Backlog, error) {
	var b Backlog
	if err := s.db.GetContext(ctx, &b, backlogSelect+` AND account_id = $1`, account); err != nil {
		return b, fmt.Errorf("store: backlog: %w", err)
	}
	return b, nil
}

// TotalBacklog is the backlog of every account's deliveries.
func (s *Store) TotalBacklog(ctx context.Context) (Backlog, error) {
	var b Backlog
	if err := s.db.GetContext(ctx, &b, backlogSelect); err != nil {
		return b, fmt.Errorf("store: total backlog: %w", err)
	}
	return b, nil
}
