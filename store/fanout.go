package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// insertDeliveriesSQL inserts the deliveries of one event, however many, in
// one statement (a row at a time, a fan-out to 200 subscriptions cost 200
// round trips): $1 to $15 are deliveryArgs. A delivery whose first attempt
// the same statement opens (a time in $15) counts that attempt.
const insertDeliveriesSQL = `INSERT INTO deliveries
		(id, account_id, event_id, subscription_id, endpoint_id, event_type, policy, status,
			workflow_id, started, final_reason, previous_id, ordering_key, seq, attempts)
		SELECT u.id, $2, $3, u.sub, u.ep, $4, u.pol, u.status, u.wf, u.started, u.reason, u.prev, u.okey, u.seq,
			CASE WHEN u.opened <> '' THEN 1 ELSE 0 END
		FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[],
			$11::text[], $12::text[], $13::text[], $14::bigint[], $15::text[])
			AS u(id, sub, ep, pol, status, wf, started, reason, prev, okey, seq, opened)`

// deliveryArgs are insertDeliveriesSQL's arguments for ds (one event's: the
// account, event and type are ds[0]'s).
func deliveryArgs(ds []Delivery) []any {
	n := len(ds)
	ids, subs, eps, pols := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses, wfs, reasons, started := make([]string, n), make([]string, n), make([]string, n), make([]bool, n)
	prevs, keys, seqs := make([]sql.NullString, n), make([]sql.NullString, n), make([]sql.NullInt64, n)
	opened := make([]string, n)
	for i, d := range ds {
		if d.first != nil {
			opened[i] = d.first.opened.Format(time.RFC3339Nano)
		}
		ids[i], subs[i], eps[i], pols[i] = d.ID, d.SubscriptionID, d.EndpointID, d.Policy
		statuses[i], wfs[i], reasons[i], started[i] = string(d.Status), d.WorkflowID, d.FinalReason, d.Started
		if d.PreviousID != nil {
			prevs[i] = sql.NullString{String: *d.PreviousID, Valid: true}
		}
		if d.Seq != nil {
			keys[i], seqs[i] = sql.NullString{String: *d.OrderingKey, Valid: true}, sql.NullInt64{Int64: *d.Seq, Valid: true}
		}
	}
	var first Delivery
	if n > 0 {
		first = ds[0]
	}
	return []any{pq.Array(ids), first.AccountID, first.EventID, first.EventType, pq.Array(subs), pq.Array(eps),
		pq.Array(pols), pq.Array(statuses), pq.Array(wfs), pq.Array(started), pq.Array(reasons), pq.Array(prevs),
		pq.Array(keys), pq.Array(seqs), pq.Array(opened)}
}

// insertedTimes are the times PostgreSQL gave inserted deliveries: now() of
// the transaction, the same for every row; null when none was inserted.
type insertedTimes struct {
	CreatedAt sql.NullTime `db:"created_at"`
	UpdatedAt sql.NullTime `db:"updated_at"`
}

// fill sets the times of ds.
func (t insertedTimes) fill(ds []Delivery) {
	for i := range ds {
		ds[i].CreatedAt, ds[i].UpdatedAt = t.CreatedAt.Time, t.UpdatedAt.Time
	}
}

// insertDeliveries inserts deliveries of one event in one statement and
// fills in their times.
func insertDeliveries(ctx context.Context, tx *sqlx.Tx, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	var times insertedTimes
	err := tx.GetContext(ctx, &times, `WITH ins AS (`+insertDeliveriesSQL+`
		RETURNING created_at, updated_at)
		SELECT created_at, updated_at FROM ins LIMIT 1`, deliveryArgs(ds)...)
	if err != nil {
		return fmt.Errorf("store: insert deliveries: %w", err)
	}
	times.fill(ds)
	return nil
}

// insertDelivery inserts one delivery and fills in its times.
func insertDelivery(ctx context.Context, tx *sqlx.Tx, d *Delivery) error {
	ds := []Delivery{*d}
	if err := insertDeliveries(ctx, tx, ds); err != nil {
		return err
	}
	*d = ds[0]
	return nil
}
