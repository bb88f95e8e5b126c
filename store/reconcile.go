package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// MaxStartAttempts bounds the tries to start a delivery's workflow: after
// the last (StartFailed reports it), the delivery ends dead-lettered with
// the start's error as its reason. With the sweeper's back-off (30 s,
// doubling, at most an hour) the tries take about five hours.
const MaxStartAttempts = 12

// InFlightCursor is where a walk through the deliveries in flight
// (InFlightDeliveries) stands: the last delivery it returned.
type InFlightCursor struct {
	CreatedAt time.Time
	ID        string
}

// InFlight is a delivery in flight, and its Event Grid batch if it is in
// one ("" otherwise): the batch's workflow, not the delivery's, runs it.
type InFlight struct {
	Delivery
	BatchID string `db:"batch"`
}

// InFlightDeliveries returns up to limit deliveries after cursor, in the
// order they were stored, whose workflow (or batch's workflow) should be
// running: in flight (pending, retrying, waiting), started, unchanged for
// longer than age. The deliveries of every account are read through the
// index of each account's statuses, so that only rows in flight are read.
func (s *Store) InFlightDeliveries(ctx context.Context, cursor InFlightCursor, age time.Duration, limit int) ([]InFlight, error) {
	ds := []InFlight{}
	err := s.db.SelectContext(ctx, &ds, `SELECT `+deliveryCols+`, COALESCE(batch_id, '') AS batch FROM deliveries
		WHERE account_id IN (SELECT id FROM accounts) AND status IN `+inFlightSQL+`
		  AND created_at >= $1 AND (created_at, id) > ($1, $2)
		  AND started AND updated_at < now() - $3 * interval '1 millisecond'
		ORDER BY created_at, id LIMIT $4`, cursor.CreatedAt, cursor.ID, age.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries in flight: %w", err)
	}
	return ds, nil
}

// StartFailed records that the workflows of these deliveries could not be
// started: each failure puts the sweeper's next try off further (30 s,
// doubling, at most an hour). It returns the deliveries whose start has now
// failed MaxStartAttempts times, for the caller to end.
func (s *Store) StartFailed(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []struct {
		ID       string `db:"id"`
		Attempts int    `db:"start_attempts"`
	}
	err := s.db.SelectContext(ctx, &rows, `UPDATE deliveries SET start_attempts = start_attempts + 1,
			next_start_at = now() + least(interval '30 seconds' * power(2, least(start_attempts, 10)), interval '1 hour')
		WHERE id = ANY($1) AND NOT started RETURNING id, start_attempts`, pq.StringArray(ids))
	if err != nil {
		return nil, fmt.Errorf("store: record failed starts: %w", err)
	}
	var exhausted []string
	for _, r := range rows {
		if r.Attempts >= MaxStartAttempts {
			exhausted = append(exhausted, r.ID)
		}
	}
	return exhausted, nil
}

// DeliveryByID returns the delivery with this id, whatever its account.
func (s *Store) DeliveryByID(ctx context.Context, id string) (Delivery, error) {
	var d Delivery
	err := s.db.GetContext(ctx, &d, `SELECT `+deliveryCols+` FROM deliveries WHERE id = $1`, id)
	if err != nil {
		return Delivery{}, notFound(err, "delivery", id)
	}
	return d, nil
}
