package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
)

// Error kinds of attempts rows that are not an outcome: a request sent whose
// outcome is not recorded yet, and one whose outcome a crash lost.
const (
	KindInFlight = "in_flight"
	KindUnknown  = "unknown"
)

// BeginAttempts records, before the request goes out, one open attempts row
// (error kind in_flight) per delivery the request carries (one, or a batch's:
// docs/policies.md#iot-edge-output-batching, so that each event stays
// traceable to its attempts). An attempt of these deliveries still open, cut
// off by a crash, is closed first as unknown. as are the attempts of one
// request: the first's attempt number and times stand for all. It takes one
// statement, and returns the new rows' ids, in the order of as, for
// CompleteAttempts.
func (s *Store) BeginAttempts(ctx context.Context, as []Attempt) ([]int64, error) {
	if len(as) == 0 {
		return nil, errors.New("store: attempt of no delivery")
	}
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.DeliveryID
	}
	var rows []struct {
		ID         int64  `db:"id"`
		DeliveryID string `db:"delivery_id"`
	}
	err := s.opening(ctx, ids, as[0].StartedAt, func() error {
		return sqlx.SelectContext(ctx, s.prep, &rows, `WITH input AS (SELECT DISTINCT unnest($1::text[]) AS delivery_id), `+
			openSQL+` `+insertOpenSQL+` RETURNING id, delivery_id`, pq.Array(ids), as[0].Attempt, as[0].ScheduledAt,
			as[0].StartedAt, KindInFlight, KindUnknown, cutOff)
	})
	if err != nil {
		return nil, fmt.Errorf("store: begin attempts: %w", err)
	}
	byDelivery := make(map[string]int64, len(rows))
	for _, r := range rows {
		byDelivery[r.DeliveryID] = r.ID
	}
	out := make([]int64, len(as))
	for i, id := range ids {
		out[i] = byDelivery[id]
	}
	return out, nil
}

// openSQL and insertOpenSQL open an attempts row (attempt $2, scheduled
// $3, started $4, error kind $5) for every delivery of the CTE input, after
// closing its rows still open as unknown ($6, message $7): the steps
// BeginAttempts and BeginTarget share. An attempt is made by its delivery's
// workflow, so the delivery is recorded as started too: MarkStarted, which
// the start queue runs a second after its starts, then finds most of them
// started and writes no new version of their rows.
//
// The row is numbered $2, the workflow's count, unless the delivery has an
// attempt numbered $2 or later with an outcome already: its workflow was
// reset to an earlier point (the Web UI's Reset) or started again, and
// counts from zero again. The row then follows the delivery's last one, so
// that its attempts stay numbered in the order they were made (num). A
// row a crash cut off (open, or closed as unknown) is tried again under
// its number instead (try).
const (
	openSQL = closeOpenSQL + `,
		num AS (SELECT i.delivery_id, CASE WHEN EXISTS (SELECT 1 FROM attempts a
				WHERE a.delivery_id = i.delivery_id AND a.attempt >= $2 AND a.error_kind NOT IN ($5, $6))
			THEN (SELECT max(a.attempt) + 1 FROM attempts a WHERE a.delivery_id = i.delivery_id) ELSE $2 END AS attempt
			FROM input i),
		counted AS (UPDATE deliveries d SET attempts = GREATEST(d.attempts, n.attempt + 1), started = true,
			updated_at = now()
			FROM num n WHERE d.id = n.delivery_id)`
	insertOpenSQL = `INSERT INTO attempts (delivery_id, attempt, try, scheduled_at, started_at, duration_ms, error_kind, success)
		SELECT n.delivery_id, n.attempt, COALESCE((SELECT max(a.try) + 1 FROM attempts a
				WHERE a.delivery_id = n.delivery_id AND a.attempt = n.attempt), 0), $3, $4, 0, $5, false
		FROM num n`
)

// closeOpenSQL is openSQL's first step: the rows still open closed.
const closeOpenSQL = `closed AS (UPDATE attempts a SET error_kind = $6, error_message = $7
			FROM input i WHERE a.delivery_id = i.delivery_id AND a.error_kind = $5)`

// cutOff is the error message of an attempt a crash cut off.
const cutOff = "the worker stopped before the outcome was recorded"

// closeOpenAttempts closes the delivery's open attempts as unknown.
func closeOpenAttempts(ctx context.Context, tx *sqlx.Tx, deliveryID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE attempts SET error_kind = $2, error_message = $4
		WHERE delivery_id = $1 AND error_kind = $3`, deliveryID, KindUnknown, KindInFlight, cutOff)
	if err != nil {
		return fmt.Errorf("store: close open attempts: %w", err)
	}
	return nil
}

// Completed is what CompleteAttempts did.
type Completed struct {
	// Counters are the endpoint's counters after the request was counted.
	Counters Counters
	// Delivered is the delivery CompleteAttempts recorded as delivered
	// (Completion.FinishDelivered), nil when it recorded none.
	Delivered *Delivery
	// Later is true when the outcome is not recorded yet: the caller
	// writes it in the background (activities.Later). Counters are then
	// the endpoint's as the attempt found it.
	Later bool
}

// CompleteAttempts records rec, the outcome of one request, on the open rows
// ids that BeginAttempts made for it, and counts it once against the
// endpoint (one bucket increment, one step of its consecutive failures),
// since the endpoint saw one request. When rec succeeded and finish names a
// delivery, that delivery is recorded as delivered too (as FinishDelivery
// does), so that a first attempt that succeeds ends with one statement. It
// takes one statement and returns the endpoint's counters; completing the
// same rows twice counts them once and finishes nothing.
func (s *Store) CompleteAttempts(ctx context.Context, endpointID string, ids []int64, rec Attempt, finish string) (Completed, error) {
	if len(rec.ResponseHeaders) == 0 {
		rec.ResponseHeaders = RawJSON("{}")
	}
	if !rec.Success {
		finish = ""
	}
	var row struct {
		Counters
		Policy    *string    `db:"policy"`
		CreatedAt *time.Time `db:"delivery_created_at"`
	}
	err := sqlx.GetContext(ctx, s.prep, &row, completeSQL, pq.Array(ids), rec.StartedAt, rec.DurationMs,
		rec.StatusCode, rec.ErrorKind, rec.ErrorMessage, rec.ResponseBody, rec.ResponseHeaders,
		rec.Success, KindInFlight, endpointID, rec.StartedAt.Add(time.Duration(rec.DurationMs*float64(time.Millisecond))),
		failed(rec), finish, policies.StatusDelivered)
	if err != nil {
		return Completed{}, fmt.Errorf("store: complete attempt: %w", err)
	}
	out := Completed{Counters: row.Counters}
	if row.Policy != nil {
		out.Delivered = &Delivery{ID: finish, Policy: *row.Policy, CreatedAt: *row.CreatedAt, Status: policies.StatusDelivered}
	}
	return out, nil
}

// failed is 1 for a failed request, 0 for a success, as the counters add it.
func failed(rec Attempt) int {
	if rec.Success {
		return 0
	}
	return 1
}

// completeSQL is CompleteAttempts' statement: the rows completed (done),
// then, only if any was, the endpoint's minute bucket and counters
// (docs/policies.md#workfront-circuit-breaker) and the delivery finished; the
// counters as they are when nothing was completed. A delivery finished here
// finished when its request's answer came ($12), not when this statement
// ran: the outcome of a first attempt is written after its workflow was told
// (activities.Later), by when an ordered subscription's next delivery may
// already have been attempted.
var completeSQL = `WITH done AS (UPDATE attempts SET started_at = $2, duration_ms = $3,
		status_code = $4, error_kind = $5, error_message = $6, response_body = $7,
		response_headers = $8, success = $9
		WHERE id = ANY($1) AND error_kind = $10 RETURNING delivery_id),
	bucket AS (INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
		SELECT $11, date_trunc('minute', $12::timestamptz), 1, $13 WHERE EXISTS (SELECT 1 FROM done)
		ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
			attempts = endpoint_buckets.attempts + 1, failures = endpoint_buckets.failures + $13),
	counted AS (UPDATE endpoints SET attempts = attempts + 1, failures = failures + $13,
			consecutive_failures = CASE WHEN $13 = 1 THEN consecutive_failures + 1 ELSE 0 END,
			last_success_at = CASE WHEN $13 = 0 THEN GREATEST(last_success_at, $12) ELSE last_success_at END,
			last_failure_at = CASE WHEN $13 = 1 THEN GREATEST(last_failure_at, $12) ELSE last_failure_at END,
			updated_at = now()
		WHERE id = $11 AND EXISTS (SELECT 1 FROM done)
		RETURNING id, state, attempts, failures, consecutive_failures, last_success_at, created_at),
	finished AS (UPDATE deliveries SET ` + endSQL("$15", "''", "$12") + `
		WHERE id = $14 AND status NOT IN ` + finalSQL + ` AND EXISTS (SELECT 1 FROM done)
		RETURNING policy, created_at)
	SELECT c.*, f.policy, f.created_at AS delivery_created_at FROM counted c LEFT JOIN finished f ON true
	UNION ALL
	SELECT id, state, attempts, failures, consecutive_failures, last_success_at, created_at, NULL, NULL
	FROM endpoints WHERE id = $11 AND NOT EXISTS (SELECT 1 FROM done)`

// BeginTarget is Target and BeginAttempts in one statement, for attempt a of
// one delivery, so that a first attempt makes one round trip before its
// request: the open row is written only if the endpoint's state is one of
// states and, when unlimitedOnly, the endpoint has no limits (Limited).
// row is then the open row's id, for CompleteAttempts; else it is 0, nothing
// was written, and the caller goes on from t as after Target. A delivery
// that has ended (t.Status final) gets no row. A first
// attempt that publishing handed over in this process (FirstAttempts)
// makes no statement: the publish opened its row.
func (s *Store) BeginTarget(ctx context.Context, a Attempt, states []string, unlimitedOnly bool) (t Target, row int64, err error) {
	if a.Attempt == 0 {
		if fa, ok := s.firsts.take(a.DeliveryID); ok && fa.row != 0 {
			if mayBegin(fa.t, states, unlimitedOnly) {
				return fa.t, fa.row, nil
			}
			s.unsent.note([]string{a.DeliveryID}, fa.opened) // deleted by the open below
		}
	}
	var out struct {
		Target
		MayBegin bool   `db:"may_begin"`
		Row      *int64 `db:"attempt_row"`
	}
	err = s.opening(ctx, []string{a.DeliveryID}, a.StartedAt, func() error {
		return sqlx.GetContext(ctx, s.prep, &out, beginTargetSQL, a.DeliveryID, a.Attempt, a.ScheduledAt, a.StartedAt,
			KindInFlight, KindUnknown, cutOff, pq.Array(states), unlimitedOnly)
	})
	if err != nil {
		return Target{}, 0, notFound(err, "delivery", a.DeliveryID)
	}
	if out.Row != nil {
		row = *out.Row
	}
	if err := s.openTarget(&out.Target); err != nil {
		if row != 0 { // opened, and nothing will be sent: deleted by the next open
			s.unsent.note([]string{a.DeliveryID}, a.StartedAt)
		}
		return Target{}, 0, err
	}
	return out.Target, row, nil
}

// beginTargetSQL is BeginTarget's statement: the target (t), and, if it may
// begin (states $8, unlimitedOnly $9, and the delivery has not ended), the steps of BeginAttempts for its one
// delivery.
var beginTargetSQL = `WITH t AS (SELECT ` + targetCols + `,
			(p.state = ANY($8) AND (NOT $9 OR (` + unlimitedSQL + `)) AND d.status NOT IN ` + finalSQL + `) AS may_begin
		` + targetFrom + ` WHERE d.id = $1),
	input AS (SELECT delivery_id FROM t WHERE may_begin),
	` + openSQL + `,
	opened AS (` + insertOpenSQL + ` RETURNING id)
	SELECT t.*, (SELECT id FROM opened) AS attempt_row FROM t`
