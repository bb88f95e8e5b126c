package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
)

// Success is the outcome of a request that succeeded and finished its
// delivery, to be recorded on the open attempts row Row that was written
// before the request went out.
type Success struct {
	Row             int64
	DeliveryID      string
	StartedAt       time.Time
	DurationMs      float64
	StatusCode      int
	ResponseBody    string
	ResponseHeaders RawJSON
}

// CompleteSuccesses records outcomes of successful requests to one
// endpoint, each finishing its delivery, in one statement: what
// CompleteAttempts does for each, with the endpoint's counters and minute
// buckets counted once for all (docs/policies.md#workfront-circuit-breaker).
// A row no longer open (recorded already, by the sweeper's settling) is
// neither counted nor finished again. It returns the deliveries it recorded
// as delivered. Grouping by endpoint keeps to one endpoint row per
// statement, as CompleteAttempts does, so that concurrent writers never
// wait on each other's endpoints in turn.
func (s *Store) CompleteSuccesses(ctx context.Context, endpointID string, ss []Success) ([]Delivery, error) {
	n := len(ss)
	rows, ids := make([]int64, n), make([]string, n)
	started, durations := make([]time.Time, n), make([]float64, n)
	codes, bodies, headers := make([]int64, n), make([]string, n), make([]string, n)
	for i, x := range ss {
		rows[i], ids[i], started[i], durations[i] = x.Row, x.DeliveryID, x.StartedAt, x.DurationMs
		codes[i], bodies[i], headers[i] = int64(x.StatusCode), x.ResponseBody, string(x.ResponseHeaders)
		if len(x.ResponseHeaders) == 0 {
			headers[i] = "{}"
		}
	}
	var out []struct {
		ID        string    `db:"id"`
		Policy    string    `db:"policy"`
		CreatedAt time.Time `db:"created_at"`
	}
	err := sqlx.SelectContext(ctx, s.prep, &out, completeSuccessesSQL, pq.Array(rows), pq.Array(ids),
		pq.Array(started), pq.Array(durations), pq.Array(codes), pq.Array(bodies), pq.Array(headers),
		KindInFlight, endpointID, policies.StatusDelivered)
	if err != nil {
		return nil, fmt.Errorf("store: complete successes: %w", err)
	}
	ds := make([]Delivery, len(out))
	for i, d := range out {
		ds[i] = Delivery{ID: d.ID, Policy: d.Policy, CreatedAt: d.CreatedAt, Status: policies.StatusDelivered}
	}
	return ds, nil
}

// completeSuccessesSQL is CompleteSuccesses' statement: completeSQL for
// many successful rows of endpoint $9 at once (input, done), their minute
// buckets and the endpoint's counters added up, and their deliveries
// finished.
var completeSuccessesSQL = `WITH input AS (
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::float8[], $5::int[], $6::text[], $7::jsonb[])
			AS i(id, delivery_id, started_at, duration_ms, status_code, response_body, response_headers)),
	done AS (UPDATE attempts a SET started_at = i.started_at, duration_ms = i.duration_ms,
			status_code = i.status_code, error_kind = '', error_message = '', response_body = i.response_body,
			response_headers = i.response_headers, success = true
		FROM input i WHERE a.id = i.id AND a.delivery_id = i.delivery_id AND a.error_kind = $8
		RETURNING a.delivery_id, i.started_at + i.duration_ms * interval '1 millisecond' AS ended),
	bucket AS (INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
		SELECT $9, date_trunc('minute', ended), count(*), 0 FROM done GROUP BY 2 ORDER BY 2
		ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET attempts = endpoint_buckets.attempts + EXCLUDED.attempts),
	counted AS (UPDATE endpoints SET attempts = attempts + c.n, consecutive_failures = 0,
			last_success_at = GREATEST(last_success_at, c.last), updated_at = now()
		FROM (SELECT count(*) AS n, max(ended) AS last FROM done) c WHERE id = $9 AND c.n > 0)
	UPDATE deliveries d SET status = $10, final_reason = '', next_attempt_at = NULL,
		finished_at = now(), updated_at = now()
	FROM done WHERE d.id = done.delivery_id AND d.status NOT IN ` + finalSQL + `
	RETURNING d.id, d.policy, d.created_at`
