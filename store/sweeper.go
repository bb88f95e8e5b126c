package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Final reasons of the deliveries of Event Grid subscriptions that never
// passed their validation handshake.
const (
	ReasonDeletedBeforeValidation = "subscription deleted before validation"
	ReasonValidationFailed        = "subscription validation failed"
	ReasonTTLAwaitingValidation   = "TimeToLiveExceeded while awaiting validation"
)

// dropUnstarted finishes as dropped the pending deliveries of a subscription
// whose workflows were never started (marking them started, so no sweeper
// starts them), those older than olderThan when it is positive. It returns
// how many it dropped.
func dropUnstarted(ctx context.Context, tx sqlx.ExecerContext, subID, reason string, olderThan time.Duration) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'dropped', final_reason = $2,
			started = true, next_attempt_at = NULL, finished_at = now(), updated_at = now()
		WHERE subscription_id = $1 AND NOT started AND status = 'pending' AND batch_id IS NULL
		  AND ($3 <= 0 OR created_at < now() - $3 * interval '1 millisecond')`,
		subID, reason, olderThan.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("store: drop unstarted deliveries of %s: %w", subID, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// DropUnstarted finishes as dropped, with reason, the unstarted pending
// deliveries of a subscription older than olderThan (all when it is 0).
func (s *Store) DropUnstarted(ctx context.Context, subID, reason string, olderThan time.Duration) (int64, error) {
	return dropUnstarted(ctx, s.db, subID, reason, olderThan)
}

// awaitingSQL matches a subscription (s) awaiting its validation handshake;
// batchingSQL one batching its output.
const (
	awaitingSQL = `s.options->'eventgrid'->>'validation' IN ('pending', 'failed')`
	batchingSQL = `COALESCE((s.options->'eventgrid'->>'max_events_per_batch')::int, 0) > 0`
)

// SweptSubscription is a subscription the sweeper looks at, and whether it
// was deleted.
type SweptSubscription struct {
	Subscription
	Deleted bool `db:"deleted"`
}

// SubscriptionsWithUnstarted returns the subscriptions, deleted or not, that
// have pending deliveries older than age whose workflows were never started
// and that are awaiting their validation handshake (awaiting true) or
// batching their output and not awaiting (awaiting false).
func (s *Store) SubscriptionsWithUnstarted(ctx context.Context, age time.Duration, awaiting bool) ([]SweptSubscription, error) {
	which := awaitingSQL
	if !awaiting {
		which = batchingSQL + ` AND NOT (` + awaitingSQL + `)`
	}
	subs := []SweptSubscription{}
	err := s.db.SelectContext(ctx, &subs, `SELECT `+subscriptionCols+`, deleted_at IS NOT NULL AS deleted,
		`+accountQueueModeSQL+`
		FROM subscriptions s
		WHERE `+which+` AND EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id
		  AND NOT d.started AND d.status = 'pending' AND d.created_at < now() - $1 * interval '1 millisecond')
		ORDER BY s.created_at, s.id`, age.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("store: subscriptions with unstarted deliveries: %w", err)
	}
	return subs, nil
}

// StrandedBatch is a claimed batch whose deliveries are all still pending.
type StrandedBatch struct {
	ID             string         `db:"id"`
	SubscriptionID string         `db:"subscription_id"`
	DeliveryIDs    pq.StringArray `db:"delivery_ids"`
	// PublishedAt is when its oldest delivery was stored.
	PublishedAt time.Time `db:"published_at"`
}

// StrandedBatches returns up to limit batches older than age whose
// deliveries are all still pending and started: those whose Batch workflow
// may never have been started (the caller checks).
func (s *Store) StrandedBatches(ctx context.Context, age time.Duration, limit int) ([]StrandedBatch, error) {
	bs := []StrandedBatch{}
	err := s.db.SelectContext(ctx, &bs, `SELECT b.id, b.subscription_id, b.delivery_ids,
			(SELECT min(created_at) FROM deliveries WHERE id = ANY(b.delivery_ids)) AS published_at
		FROM eventgrid_batches b
		WHERE b.id IN (SELECT DISTINCT batch_id FROM deliveries
		               WHERE batch_id IS NOT NULL AND status = 'pending' AND started)
		  AND b.created_at < now() - $1 * interval '1 millisecond'
		  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id
		      AND (d.status <> 'pending' OR NOT d.started))
		ORDER BY b.created_at, b.id LIMIT $2`, age.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: stranded batches: %w", err)
	}
	return bs, nil
}
