package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/eventgrid"
)

// BatchClaim says which deliveries to claim for one batch
// (docs/policies.md#iot-edge-output-batching).
type BatchClaim struct {
	SubscriptionID string
	// ID is the batch's id, chosen by the caller so that a retried claim is
	// idempotent: when a batch of that id exists, it is returned as it was
	// and nothing more is claimed. Empty picks a new random id.
	ID        string
	MaxEvents int
	MaxBytes  int // preferred batch size; 0 means no bound
	// Topic is the account's Event Grid topic (eventgrid.Topic): the events
	// are sized as they are sent, with it.
	Topic string
	// FullOnly claims nothing unless a full batch is waiting: MaxEvents
	// deliveries, or more than MaxBytes of them.
	FullOnly bool
}

// Batch is what ClaimBatch claimed.
type Batch struct {
	ID          string
	DeliveryIDs []string
	// Remaining counts the subscription's pending deliveries left unclaimed.
	Remaining int
	// Gone is true when the subscription was deleted and nothing is pending.
	Gone bool
	// PublishedAt is when its oldest delivery was stored: the batch's
	// time-to-live counts from it (docs/policies.md#eventgrid-edge).
	PublishedAt time.Time
	// PublishedAts are when each delivery was stored, in DeliveryIDs'
	// order: each keeps its own time-to-live.
	PublishedAts []time.Time
}

// sizes are the sizes of the targets' events as a request of their
// subscription carries them (docs/policies.md#iot-edge-output-batching: "the
// preferred batch size counts each event as it is sent"): each whole event
// in the subscription's schema (eventgrid.Size), and the comma before it.
func sizes(ts []Target, topic string) ([]int, error) {
	out := make([]int, len(ts))
	for i, t := range ts {
		schema := eventgrid.SchemaEventGrid
		if eg := eventgrid.Of(t.Options); eg != nil {
			schema = eg.Schema
		}
		n, err := eventgrid.Size(t.Outgoing(topic), schema)
		if err != nil {
			return nil, fmt.Errorf("store: claim batch: %w", err)
		}
		out[i] = n + min(i, 1)
	}
	return out, nil
}

// ClaimBatch takes the oldest unclaimed deliveries of a batching subscription
// (at most MaxEvents, within MaxBytes of events as sent, but always at least one:
// an oversize event goes alone), records them as a batch and marks them
// started, in one transaction. A claim repeated with the same c.ID returns the
// batch claimed the first time.
func (s *Store) ClaimBatch(ctx context.Context, c BatchClaim) (Batch, error) {
	var b Batch
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if found, err := s.existingBatch(ctx, tx, c, &b); err != nil || found {
			return err
		}
		var cs []Target
		err := tx.SelectContext(ctx, &cs, `SELECT `+targetCols+` `+targetFrom+`
			WHERE d.subscription_id = $1 AND NOT d.started AND d.status = 'pending'
			ORDER BY d.created_at, d.id LIMIT $2 FOR UPDATE OF d SKIP LOCKED`, c.SubscriptionID, c.MaxEvents+1)
		if err != nil {
			return fmt.Errorf("store: claim batch: %w", err)
		}
		sz, err := sizes(cs, c.Topic)
		if err != nil {
			return err
		}
		n, full := eventgrid.Pick(sz, c.MaxEvents, c.MaxBytes)
		take, published := make([]string, n), make([]time.Time, n)
		for i := range take {
			take[i], published[i] = cs[i].DeliveryID, cs[i].CreatedAt
		}
		if len(take) == 0 || (c.FullOnly && !full) {
			return s.countPending(ctx, tx, c.SubscriptionID, &b)
		}
		b.ID, b.DeliveryIDs, b.PublishedAt, b.PublishedAts = c.ID, take, cs[0].CreatedAt, published
		if b.ID == "" {
			b.ID = NewID("batch")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO eventgrid_batches (id, subscription_id, delivery_ids)
			VALUES ($1, $2, $3)`, b.ID, c.SubscriptionID, pq.StringArray(take)); err != nil {
			return fmt.Errorf("store: insert batch: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET started = true, batch_id = $1
			WHERE id = ANY($2)`, b.ID, pq.StringArray(take)); err != nil {
			return fmt.Errorf("store: claim batch: %w", err)
		}
		return s.countPending(ctx, tx, c.SubscriptionID, &b)
	})
	return b, err
}

// publishedAt fills b.PublishedAts, when each of its deliveries (a batch
// claimed before) was stored, and b.PublishedAt, the oldest of them.
func publishedAt(ctx context.Context, tx *sqlx.Tx, b *Batch) error {
	b.PublishedAts = nil
	if err := tx.SelectContext(ctx, &b.PublishedAts, `SELECT d.created_at
		FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n) JOIN deliveries d ON d.id = u.id
		ORDER BY u.n`, pq.StringArray(b.DeliveryIDs)); err != nil {
		return fmt.Errorf("store: batch published at: %w", err)
	}
	if len(b.PublishedAts) != len(b.DeliveryIDs) {
		b.PublishedAts = nil
	}
	b.PublishedAt = time.Time{}
	for _, at := range b.PublishedAts {
		if b.PublishedAt.IsZero() || at.Before(b.PublishedAt) {
			b.PublishedAt = at
		}
	}
	return nil
}

// existingBatch fills b with the batch c.ID when it was already claimed.
func (s *Store) existingBatch(ctx context.Context, tx *sqlx.Tx, c BatchClaim, b *Batch) (bool, error) {
	if c.ID == "" {
		return false, nil
	}
	var ids pq.StringArray
	err := tx.GetContext(ctx, &ids, `SELECT delivery_ids FROM eventgrid_batches
		WHERE id = $1 AND subscription_id = $2`, c.ID, c.SubscriptionID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: find batch: %w", err)
	}
	b.ID, b.DeliveryIDs = c.ID, ids
	if err := publishedAt(ctx, tx, b); err != nil {
		return false, err
	}
	return true, s.countPending(ctx, tx, c.SubscriptionID, b)
}

// countPending fills b.Remaining and b.Gone.
func (s *Store) countPending(ctx context.Context, tx *sqlx.Tx, subID string, b *Batch) error {
	var row struct {
		Remaining int  `db:"remaining"`
		Deleted   bool `db:"deleted"`
	}
	err := tx.GetContext(ctx, &row, `SELECT
			(SELECT count(*) FROM deliveries WHERE subscription_id = $1 AND NOT started AND status = 'pending') AS remaining,
			COALESCE((SELECT deleted_at IS NOT NULL FROM subscriptions WHERE id = $1), true) AS deleted`, subID)
	if err != nil {
		return fmt.Errorf("store: count pending: %w", err)
	}
	b.Remaining = row.Remaining
	b.Gone = row.Deleted && row.Remaining == 0 && b.ID == ""
	return nil
}

// BatchTargets loads the targets of a batch's deliveries, in batch order.
func (s *Store) BatchTargets(ctx context.Context, ids []string) ([]Target, error) {
	out := make([]Target, 0, len(ids))
	for _, id := range ids {
		t, err := s.Target(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
