package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Error kinds of attempts rows that are not an outcome: a request sent whose
// outcome is not recorded yet, and one whose outcome a crash lost.
const (
	KindInFlight = "in_flight"
	KindUnknown  = "unknown"
)

// BeginAttempts records, before the request goes out, one open attempts row
// (error kind in_flight) per delivery the request carries (one, or a batch's:
// POLICIES.md §eventgrid-edge output batching, so that each event stays
// traceable to its attempts). An attempt of these deliveries still open, cut
// off by a crash, is closed first as unknown. It returns the new rows' ids,
// for CompleteAttempts.
func (s *Store) BeginAttempts(ctx context.Context, as []Attempt) ([]int64, error) {
	if len(as) == 0 {
		return nil, errors.New("store: attempt of no delivery")
	}
	ids := make([]int64, len(as))
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		for i, a := range as {
			if err := closeOpenAttempts(ctx, tx, a.DeliveryID); err != nil {
				return err
			}
			err := tx.GetContext(ctx, &ids[i], `INSERT INTO attempts (delivery_id, attempt, try, scheduled_at,
					started_at, duration_ms, error_kind, success)
				SELECT $1, $2, COALESCE(max(try) + 1, 0), $3, $4, 0, $5, false
				FROM attempts WHERE delivery_id = $1 AND attempt = $2
				RETURNING id`, a.DeliveryID, a.Attempt, a.ScheduledAt, a.StartedAt, KindInFlight)
			if err != nil {
				return fmt.Errorf("store: begin attempt: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET attempts = GREATEST(attempts, $2),
					updated_at = now() WHERE id = $1`, a.DeliveryID, a.Attempt+1); err != nil {
				return fmt.Errorf("store: count delivery attempt: %w", err)
			}
		}
		return nil
	})
	return ids, err
}

// closeOpenAttempts closes the delivery's open attempts as unknown.
func closeOpenAttempts(ctx context.Context, tx *sqlx.Tx, deliveryID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE attempts SET error_kind = $2,
			error_message = 'the worker stopped before the outcome was recorded'
		WHERE delivery_id = $1 AND error_kind = $3`, deliveryID, KindUnknown, KindInFlight)
	if err != nil {
		return fmt.Errorf("store: close open attempts: %w", err)
	}
	return nil
}

// CompleteAttempts records rec, the outcome of one request, on the open rows
// ids that BeginAttempts made for it, and counts it once against the
// endpoint (one bucket increment, one step of its consecutive failures),
// since the endpoint saw one request. It runs in one transaction and returns
// the endpoint's counters; completing the same rows twice counts them once.
func (s *Store) CompleteAttempts(ctx context.Context, endpointID string, ids []int64, rec Attempt) (Counters, error) {
	if len(rec.ResponseHeaders) == 0 {
		rec.ResponseHeaders = RawJSON("{}")
	}
	var c Counters
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE attempts SET started_at = $2, duration_ms = $3,
				status_code = $4, error_kind = $5, error_message = $6, response_body = $7,
				response_headers = $8, success = $9
			WHERE id = ANY($1) AND error_kind = $10`, pq.Array(ids), rec.StartedAt, rec.DurationMs,
			rec.StatusCode, rec.ErrorKind, rec.ErrorMessage, rec.ResponseBody, rec.ResponseHeaders,
			rec.Success, KindInFlight)
		if err != nil {
			return fmt.Errorf("store: complete attempt: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return tx.GetContext(ctx, &c, `SELECT id, state, attempts, failures, consecutive_failures,
				last_success_at, created_at FROM endpoints WHERE id = $1`, endpointID)
		}
		c, err = countAttempt(ctx, tx, endpointID, rec)
		return err
	})
	return c, err
}
