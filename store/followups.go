package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// followUpRule is what a follow-up of a finished delivery may do: the one
// home of the rules of a retry, a redrive and a recovery.
type followUpRule int

const (
	// retryRule: any finished delivery, one follow-up in flight at a time.
	retryRule followUpRule = iota
	// redriveRule: claims the delivery's dead letter, once.
	redriveRule
	// recoverRule: only a delivery that has no follow-up at all (never
	// retried, redriven or recovered), so a recovery redrives it once.
	recoverRule
)

// FollowUp creates a fresh delivery of prev's event to prev's subscription,
// linked to prev (a redrive or a manual retry). prev must be finished. A
// redrive claims prev's dead letter: one already redriven (or retried) is an
// ErrConflict and creates nothing, so repeating a redrive is harmless. A
// retry marks the dead letter, if any and not yet redriven, as redriven by it.
func (s *Store) FollowUp(ctx context.Context, prev Delivery, redrive bool) (Delivery, error) {
	rule := retryRule
	if redrive {
		rule = redriveRule
	}
	return s.followUp(ctx, prev, rule)
}

// followUp is FollowUp under rule, in a transaction of its own.
func (s *Store) followUp(ctx context.Context, prev Delivery, rule followUpRule) (Delivery, error) {
	if !prev.Status.IsFinal() {
		return Delivery{}, fmt.Errorf("delivery %s is still %s: %w", prev.ID, prev.Status, ErrConflict)
	}
	d := followUp(prev)
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := noFollowUp(ctx, tx, prev.ID, rule != recoverRule); err != nil {
			return err
		}
		if err := insertFollowUp(ctx, tx, &d); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE dead_letters SET redriven_at = now(),
			redrive_delivery_id = $2 WHERE delivery_id = $1 AND redrive_delivery_id IS NULL`, prev.ID, d.ID)
		if err != nil {
			return fmt.Errorf("store: mark dead letter redriven: %w", err)
		}
		if n, _ := res.RowsAffected(); rule == redriveRule && n == 0 {
			return fmt.Errorf("dead letter of delivery %s was already redriven: %w", prev.ID, ErrConflict)
		}
		return nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// noFollowUp refuses a second follow-up of prev while one is still in flight
// (one retry at a time per delivery), or, unless inFlightOnly, when it has
// any follow-up at all. It locks prev's row, so two concurrent follow-ups of
// prev are taken one after the other, the second seeing the first.
func noFollowUp(ctx context.Context, tx *sqlx.Tx, prevID string, inFlightOnly bool) error {
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE`, prevID); err != nil {
		return fmt.Errorf("store: lock delivery %s: %w", prevID, err)
	}
	q, what := `SELECT id FROM deliveries WHERE previous_id = $1`, "a follow-up"
	if inFlightOnly {
		q, what = q+` AND status IN `+inFlightSQL, "a retry in flight"
	}
	var ids []string
	if err := tx.SelectContext(ctx, &ids, q+` LIMIT 1`, prevID); err != nil {
		return fmt.Errorf("store: follow-ups of %s: %w", prevID, err)
	}
	if len(ids) > 0 {
		return fmt.Errorf("delivery %s already has %s (%s): %w", prevID, what, ids[0], ErrConflict)
	}
	return nil
}

// insertFollowUp inserts the follow-up d, numbered in its sequence first when
// its subscription is ordered (orderFollowUps).
func insertFollowUp(ctx context.Context, tx *sqlx.Tx, d *Delivery) error {
	ds := []Delivery{*d}
	if err := orderFollowUps(ctx, tx, ds); err != nil {
		return err
	}
	*d = ds[0]
	return insertDelivery(ctx, tx, d)
}
