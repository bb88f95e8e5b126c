package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
)

// Success is the outcome of a request that succeeded and finishes its
// delivery: Attempt, written on the open attempts row Row.
type Success struct {
	Row     int64
	Attempt Attempt
}

// CompleteSuccesses records, in one statement, the outcomes of successful
// requests to one endpoint on their open rows, as CompleteAttempts records
// each with its delivery to finish: each row completed is counted once
// against the endpoint (its counters and minute buckets,
// docs/policies.md#workfront-circuit-breaker) and its delivery recorded as
// delivered, finished when its request's answer came. Rows completed before
// are neither written nor counted again. It returns the deliveries it
// recorded as delivered. activities.Later writes the first-attempt
// successes of many workflows so, one statement for many; the sweeper's
// starter.SettleOpen writes those a stopped worker left open.
func (s *Store) CompleteSuccesses(ctx context.Context, endpointID string, ss []Success) ([]Delivery, error) {
	n := len(ss)
	rows, ends := make([]int64, n), make([]string, n)
	started, durations, codes := make([]string, n), make([]float64, n), make([]int64, n)
	bodies, headers := make([]string, n), make([]string, n)
	for i, x := range ss {
		a := x.Attempt
		rows[i], durations[i], codes[i], bodies[i] = x.Row, a.DurationMs, int64(a.StatusCode), a.ResponseBody
		started[i] = a.StartedAt.Format(time.RFC3339Nano)
		ends[i] = a.StartedAt.Add(time.Duration(a.DurationMs * float64(time.Millisecond))).Format(time.RFC3339Nano)
		headers[i] = "{}"
		if len(a.ResponseHeaders) > 0 {
			headers[i] = string(a.ResponseHeaders)
		}
	}
	out := []Delivery{}
	err := sqlx.SelectContext(ctx, s.prep, &out, successesSQL, pq.Array(rows), pq.Array(started),
		pq.Array(durations), pq.Array(codes), pq.Array(bodies), pq.Array(headers), pq.Array(ends),
		KindInFlight, endpointID, policies.StatusDelivered)
	if err != nil {
		return nil, fmt.Errorf("store: complete successes: %w", err)
	}
	return out, nil
}

// successesSQL is CompleteSuccesses' statement: the open rows completed
// (done), then the endpoint's minute buckets and counters by as many as
// were, and their deliveries finished.
var successesSQL = `WITH o AS (SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::float8[],
			$4::int[], $5::text[], $6::jsonb[], $7::timestamptz[])
		AS o(id, started_at, duration_ms, status_code, response_body, response_headers, ended_at)),
	done AS (UPDATE attempts a SET started_at = o.started_at, duration_ms = o.duration_ms,
			status_code = o.status_code, error_kind = '', error_message = '',
			response_body = o.response_body, response_headers = o.response_headers, success = true
		FROM o WHERE a.id = o.id AND a.error_kind = $8 RETURNING a.delivery_id, o.ended_at),
	bucket AS (INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
		SELECT $9, date_trunc('minute', ended_at), count(*), 0 FROM done GROUP BY 2
		ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
			attempts = endpoint_buckets.attempts + EXCLUDED.attempts),
	counted AS (UPDATE endpoints e SET attempts = e.attempts + c.n, consecutive_failures = 0,
			last_success_at = GREATEST(e.last_success_at, c.last), updated_at = now()
		FROM (SELECT count(*) AS n, max(ended_at) AS last FROM done) c
		WHERE e.id = $9 AND c.n > 0)
	UPDATE deliveries d SET ` + endSQL("$10", "''", "done.ended_at") + `
	FROM done WHERE d.id = done.delivery_id AND d.status NOT IN ` + finalSQL + `
	RETURNING d.id, d.policy, d.created_at, d.status`
