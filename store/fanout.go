package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// insertFanOut inserts the deliveries of one published event in one
// statement, however many subscriptions match (a row at a time, 200
// subscriptions cost 200 round trips), and fills in their times.
func insertFanOut(ctx context.Context, tx *sqlx.Tx, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	n := len(ds)
	ids, subs, eps, pols := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses, wfs, reasons, started := make([]string, n), make([]string, n), make([]string, n), make([]bool, n)
	for i, d := range ds {
		ids[i], subs[i], eps[i], pols[i] = d.ID, d.SubscriptionID, d.EndpointID, d.Policy
		statuses[i], wfs[i], reasons[i], started[i] = string(d.Status), d.WorkflowID, d.FinalReason, d.Started
	}
	rows, err := tx.QueryxContext(ctx, `INSERT INTO deliveries
		(id, account_id, event_id, subscription_id, endpoint_id, event_type, policy, status,
			workflow_id, started, final_reason)
		SELECT u.id, $2, $3, u.sub, u.ep, $4, u.pol, u.status, u.wf, u.started, u.reason
		FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::text[])
			AS u(id, sub, ep, pol, status, wf, started, reason)
		RETURNING id, created_at, updated_at`,
		pq.Array(ids), ds[0].AccountID, ds[0].EventID, ds[0].EventType,
		pq.Array(subs), pq.Array(eps), pq.Array(pols), pq.Array(statuses), pq.Array(wfs), pq.Array(started), pq.Array(reasons))
	if err != nil {
		return fmt.Errorf("store: insert deliveries: %w", err)
	}
	defer rows.Close()
	times := map[string][2]time.Time{}
	for rows.Next() {
		var id string
		var t [2]time.Time
		if err := rows.Scan(&id, &t[0], &t[1]); err != nil {
			return fmt.Errorf("store: insert deliveries: %w", err)
		}
		times[id] = t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: insert deliveries: %w", err)
	}
	for i := range ds {
		ds[i].CreatedAt, ds[i].UpdatedAt = times[ds[i].ID][0], times[ds[i].ID][1]
	}
	return nil
}
