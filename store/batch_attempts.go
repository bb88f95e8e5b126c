package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// RecordBatchAttempt stores one HTTP request that carried a batch of
// deliveries (POLICIES.md §eventgrid-edge output batching): one attempts row
// per delivery, so that each event stays traceable to its attempts, but one
// count against the endpoint (one bucket increment, one step of its
// consecutive failures), since the endpoint saw one request. It runs in one
// transaction and returns the endpoint's counters. Recording the same request
// twice (an activity retried after a crash) counts it once: it is counted
// only if the first delivery's row was new.
func (s *Store) RecordBatchAttempt(ctx context.Context, endpointID string, as []Attempt) (Counters, error) {
	if len(as) == 0 {
		return Counters{}, errors.New("store: batch attempt of no delivery")
	}
	var c Counters
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		first := false
		for i, a := range as {
			isNew, err := insertAttempt(ctx, tx, a)
			if err != nil {
				return err
			}
			if i == 0 {
				first = isNew
			}
		}
		if !first {
			return tx.GetContext(ctx, &c, `SELECT id, state, attempts, failures, consecutive_failures,
				last_success_at, created_at FROM endpoints WHERE id = $1`, endpointID)
		}
		var err error
		c, err = countAttempt(ctx, tx, endpointID, as[0])
		return err
	})
	return c, err
}

// insertAttempt inserts one attempts row, unless the delivery already has
// that attempt, and raises the delivery's attempt count; it reports whether
// the row was new.
func insertAttempt(ctx context.Context, tx *sqlx.Tx, a Attempt) (bool, error) {
	if len(a.ResponseHeaders) == 0 {
		a.ResponseHeaders = RawJSON("{}")
	}
	res, err := tx.NamedExecContext(ctx, `INSERT INTO attempts (delivery_id, attempt, scheduled_at,
			started_at, duration_ms, status_code, error_kind, error_message, response_body,
			response_headers, success)
		VALUES (:delivery_id, :attempt, :scheduled_at, :started_at, :duration_ms, :status_code,
			:error_kind, :error_message, :response_body, :response_headers, :success)
		ON CONFLICT (delivery_id, attempt) DO NOTHING`, a)
	if err != nil {
		return false, fmt.Errorf("store: insert attempt: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET attempts = GREATEST(attempts, $2),
			updated_at = now() WHERE id = $1`, a.DeliveryID, a.Attempt+1); err != nil {
		return false, fmt.Errorf("store: count delivery attempt: %w", err)
	}
	return true, nil
}
