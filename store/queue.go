package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/where"
)

// QueueColumns maps the fields of the SAP where clause (docs/policies.md#sap) to
// the columns of the pull query. Every delivery goes to a webhook, so channel
// is the constant 'webhook'.
var QueueColumns = where.Columns{
	"channel":         `'webhook'::text`,
	"status":          "d.status",
	"config.url":      "s.url",
	"subscription.id": "d.subscription_id",
	"event.type":      "e.type",
	"event.time":      "e.occurred_at",
	"id":              "d.id",
}

// QueuedDelivery is a delivery as the pull API shows it: with its
// subscription's URL and its event.
type QueuedDelivery struct {
	ID             string          `db:"id"`
	Status         policies.Status `db:"status"`
	SubscriptionID string          `db:"subscription_id"`
	URL            string          `db:"url"`
	Attempts       int             `db:"attempts"`
	CreatedAt      time.Time       `db:"created_at"`
	EventID        string          `db:"event_id"`
	EventType      string          `db:"event_type"`
	EventData      RawJSON         `db:"event_data"`
	EventTime      time.Time       `db:"event_time"`
}

// QueueCursor is where a page of the pull query starts: after the delivery
// with this creation time and id. The zero cursor starts at the oldest.
type QueueCursor struct {
	CreatedAt time.Time
	ID        string
}

const queueFrom = ` FROM deliveries d
	JOIN subscriptions s ON s.id = d.subscription_id AND s.account_id = d.account_id
	JOIN events e ON e.id = d.event_id AND e.account_id = d.account_id
	WHERE d.account_id = $1 AND `

// queueWhere compiles w into a condition whose first argument ($1) is the
// account: no row of another account can ever match.
func queueWhere(account string, w where.Expr) (string, []any, error) {
	frag, args, err := w.SQL(QueueColumns, 2)
	if err != nil {
		return "", nil, fmt.Errorf("store: queue where: %w", err)
	}
	return queueFrom + "(" + frag + ")", append([]any{account}, args...), nil
}

// ListQueue returns the account's deliveries matching w, oldest first, at
// most limit of them, starting after the cursor.
func (s *Store) ListQueue(ctx context.Context, account string, w where.Expr, after QueueCursor, limit int) ([]QueuedDelivery, error) {
	cond, args, err := queueWhere(account, w)
	if err != nil {
		return nil, err
	}
	if !after.CreatedAt.IsZero() {
		cond += " AND (d.created_at, d.id) > ($" + strconv.Itoa(len(args)+1) + ", $" + strconv.Itoa(len(args)+2) + ")"
		args = append(args, after.CreatedAt, after.ID)
	}
	args = append(args, limit)
	out := []QueuedDelivery{}
	err = s.db.SelectContext(ctx, &out, `SELECT d.id, d.status, d.subscription_id, s.url, d.attempts,
			d.created_at, e.external_id AS event_id, e.type AS event_type, e.data AS event_data,
			e.occurred_at AS event_time`+cond+`
		ORDER BY d.created_at, d.id LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list queue: %w", err)
	}
	return out, nil
}

// Redelivery is what Redeliver did: the fresh deliveries it created (not yet
// started) and how many subscriptions it reactivated.
type Redelivery struct {
	Deliveries    []Delivery
	Reactivated   int
	Subscriptions []string
}

// Redeliver, in one transaction, reactivates the subscriptions of the
// account's queued deliveries matching w, creates a fresh delivery for each
// of them and marks each queued one redelivered, linked to its fresh one.
// The caller starts the fresh deliveries; any it fails to start, the
// sweeper starts. Subscriptions since deleted are left alone.
//
// A publish reads a subscription's active flag without a lock, so one that
// read it inactive can commit a queued row after that transaction. A second
// pass therefore redelivers the matching rows still queued on the
// subscriptions it reactivated, after waiting out such publishes (see
// redeliverLate), and adds them to the result.
func (s *Store) Redeliver(ctx context.Context, account string, w where.Expr) (Redelivery, error) {
	cond, args, err := queueWhere(account, w)
	if err != nil {
		return Redelivery{}, err
	}
	var out Redelivery
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		return redeliverTx(ctx, tx, account, cond, args, &out)
	})
	if err != nil || len(out.Subscriptions) == 0 {
		return out, err
	}
	late, err := s.redeliverLate(ctx, account, cond, args, out.Subscriptions)
	out.Deliveries = append(out.Deliveries, late...)
	return out, err
}

// redeliverLate is Redeliver's second pass over the subscriptions it
// reactivated. Inserting a delivery takes a key-share lock on its
// subscription's row (the foreign key) until the publish commits; locking
// those rows FOR UPDATE first waits for every publish that already inserted
// one, so the next statement sees its queued row.
func (s *Store) redeliverLate(ctx context.Context, account, cond string, args []any, subs []string) ([]Delivery, error) {
	var late Redelivery
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT id FROM subscriptions WHERE id = ANY($1) FOR UPDATE`,
			pq.StringArray(subs)); err != nil {
			return fmt.Errorf("store: lock reactivated subscriptions: %w", err)
		}
		cond += " AND d.subscription_id = ANY($" + strconv.Itoa(len(args)+1) + ")"
		return redeliverTx(ctx, tx, account, cond, append(args[:len(args):len(args)], pq.StringArray(subs)), &late)
	})
	return late.Deliveries, err
}

// redeliverTx is one pass of Redeliver over the queued rows matching cond.
func redeliverTx(ctx context.Context, tx *sqlx.Tx, account, cond string, args []any, out *Redelivery) error {
	var queued []Delivery
	err := tx.SelectContext(ctx, &queued, `SELECT `+deliveryCols+` FROM deliveries
		WHERE status = 'queued' AND id IN (SELECT d.id`+cond+` AND s.deleted_at IS NULL)
		ORDER BY created_at, id FOR UPDATE`, args...)
	if err != nil {
		return fmt.Errorf("store: select queued: %w", err)
	}
	if out.Reactivated, out.Subscriptions, err = reactivate(ctx, tx, account, queued); err != nil {
		return err
	}
	out.Deliveries = make([]Delivery, len(queued))
	for i, prev := range queued {
		out.Deliveries[i] = followUp(prev)
	}
	if err := orderFollowUps(ctx, tx, out.Deliveries); err != nil {
		return err
	}
	for i, prev := range queued {
		if err := redeliverOne(ctx, tx, prev, &out.Deliveries[i]); err != nil {
			return err
		}
	}
	return nil
}

// reactivate sets active the inactive subscriptions of these deliveries and
// returns how many it changed and their ids.
func reactivate(ctx context.Context, tx *sqlx.Tx, account string, ds []Delivery) (int, []string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, d := range ds {
		if !seen[d.SubscriptionID] {
			seen[d.SubscriptionID] = true
			ids = append(ids, d.SubscriptionID)
		}
	}
	changed := []string{}
	if len(ids) == 0 {
		return 0, changed, nil
	}
	err := tx.SelectContext(ctx, &changed, `UPDATE subscriptions SET active = true, updated_at = now()
		WHERE account_id = $1 AND id = ANY($2) AND NOT active AND deleted_at IS NULL
		RETURNING id`, account, pq.StringArray(ids))
	if err != nil {
		return 0, nil, fmt.Errorf("store: reactivate subscriptions: %w", err)
	}
	return len(changed), changed, nil
}

// redeliverOne inserts d, the fresh delivery of prev's event to prev's
// subscription, and marks prev redelivered.
func redeliverOne(ctx context.Context, tx *sqlx.Tx, prev Delivery, d *Delivery) error {
	if err := insertDelivery(ctx, tx, d); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'redelivered', redelivery_id = $2,
		updated_at = now() WHERE id = $1 AND status = 'queued'`, prev.ID, d.ID)
	if err != nil {
		return fmt.Errorf("store: mark redelivered: %w", err)
	}
	return nil
}
