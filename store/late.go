package store

import (
	"context"
	"fmt"
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// RecordLateAnswer records rec, a success that came after the attempt on row
// was recorded with no answer (a timeout) (docs/policies.md#eventgrid: a late answer), on
// that row with its real duration, and the delivery as delivered unless it
// ended meanwhile. It reports whether it recorded the delivery delivered.
// The endpoint's counters keep the timeout: the endpoint did not answer in
// time.
func (s *Store) RecordLateAnswer(ctx context.Context, row int64, deliveryID string, rec Attempt) (bool, error) {
	if len(rec.ResponseHeaders) == 0 {
		rec.ResponseHeaders = RawJSON("{}")
	}
	answered := rec.StartedAt.Add(time.Duration(rec.DurationMs * float64(time.Millisecond)))
	res, err := s.db.ExecContext(ctx, `WITH late AS (UPDATE attempts SET duration_ms = $3,
			status_code = $4, error_kind = '', error_message = '', response_body = $5,
			response_headers = $6, success = true
			WHERE id = $1 AND delivery_id = $2 AND NOT success AND status_code = 0 RETURNING delivery_id)
		UPDATE deliveries SET `+endSQL("$7", "''", "$8")+`
		WHERE id = $2 AND status NOT IN `+finalSQL+` AND EXISTS (SELECT 1 FROM late)`,
		row, deliveryID, rec.DurationMs, rec.StatusCode, rec.ResponseBody, rec.ResponseHeaders,
		policies.StatusDelivered, answered)
	if err != nil {
		return false, fmt.Errorf("store: record late answer: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: record late answer: %w", err)
	}
	return n == 1, nil
}
