package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/eventgrid"
)

// GetSubscriptionByName returns the account's live subscription with this name.
func (s *Store) GetSubscriptionByName(ctx context.Context, account, name string) (Subscription, error) {
	var sub Subscription
	err := s.db.GetContext(ctx, &sub, `SELECT `+subscriptionCols+` FROM subscriptions
		WHERE account_id = $1 AND name = $2 AND deleted_at IS NULL`, account, name)
	if err != nil {
		return Subscription{}, notFound(err, "subscription", name)
	}
	return sub, nil
}

// PutSubscriptionByName creates sub, or replaces the account's live
// subscription of the same name (keeping its id and creation time). It
// reports whether it created one.
func (s *Store) PutSubscriptionByName(ctx context.Context, sub *Subscription) (bool, error) {
	if sub.Name == nil || *sub.Name == "" {
		return false, fmt.Errorf("store: put subscription: a name is required")
	}
	existing, err := s.GetSubscriptionByName(ctx, sub.AccountID, *sub.Name)
	if isNotFound(err) {
		return true, s.CreateSubscription(ctx, sub)
	}
	if err != nil {
		return false, err
	}
	sub.ID, sub.sealedSecrets = existing.ID, existing.sealedSecrets
	return false, s.UpdateSubscription(ctx, sub)
}

// DeleteSubscriptionByName soft-deletes the account's live subscription with
// this name: no new deliveries are made for it; those in flight finish. The
// unstarted deliveries of an Event Grid subscription still awaiting its
// handshake, which would never start, are dropped in the same transaction.
func (s *Store) DeleteSubscriptionByName(ctx context.Context, account, name string) error {
	return s.deleteSubscription(ctx, `account_id = $1 AND name = $2`, account, name)
}

// DeleteSubscription is DeleteSubscriptionByName for the account's
// subscription with this id.
func (s *Store) DeleteSubscription(ctx context.Context, account, id string) error {
	return s.deleteSubscription(ctx, `account_id = $1 AND id = $2`, account, id)
}

// deleteSubscription soft-deletes the live subscription that where (on
// account and key) finds, as DeleteSubscriptionByName says.
func (s *Store) deleteSubscription(ctx context.Context, where, account, key string) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		var sub struct {
			ID      string  `db:"id"`
			Options RawJSON `db:"options"`
		}
		err := tx.GetContext(ctx, &sub, `UPDATE subscriptions SET deleted_at = now(), updated_at = now()
			WHERE `+where+` AND deleted_at IS NULL RETURNING id, options`, account, key)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("subscription %q: %w", key, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: delete subscription: %w", err)
		}
		if !eventgrid.Of(sub.Options).Awaiting() {
			return nil
		}
		_, err = dropUnstarted(ctx, tx, sub.ID, ReasonDeletedBeforeValidation, 0)
		return err
	})
}

// SetEventGridValidation moves a subscription waiting for the validation
// handshake with this code to state. It reports whether it did: false when
// the subscription was replaced or deleted meanwhile. Moving it to failed
// drops its unstarted deliveries in the same transaction.
func (s *Store) SetEventGridValidation(ctx context.Context, subID, code, state string) (bool, error) {
	var done bool
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE subscriptions
			SET options = jsonb_set(options, '{eventgrid,validation}', to_jsonb($3::text)), updated_at = now()
			WHERE id = $1 AND deleted_at IS NULL AND options->'eventgrid'->>'validation_code' = $2
			  AND options->'eventgrid'->>'validation' IN ('pending', 'failed')`, subID, code, state)
		if err != nil {
			return fmt.Errorf("store: set validation: %w", err)
		}
		n, _ := res.RowsAffected()
		done = n == 1
		if !done || state != eventgrid.ValidationFailed {
			return nil
		}
		_, err = dropUnstarted(ctx, tx, subID, ReasonValidationFailed, 0)
		return err
	})
	return done, err
}

// MarkValidationSent records that a validation event carrying the
// subscription's validationUrl is sent at at, while the handshake of code is
// pending: the URL works for eventgrid.ValidationURLLifetime from then. It
// reports whether the handshake was still pending.
func (s *Store) MarkValidationSent(ctx context.Context, subID, code string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE subscriptions
		SET options = jsonb_set(options, '{eventgrid,validation_sent_at}', to_jsonb($3::timestamptz))
		WHERE id = $1 AND deleted_at IS NULL AND options->'eventgrid'->>'validation_code' = $2
		  AND options->'eventgrid'->>'validation' = 'pending'`, subID, code, at)
	if err != nil {
		return false, fmt.Errorf("store: mark validation sent: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SetValidationError records why the handshake of code could not be made,
// in the subscription's validation state (eventgrid.Settings.ValidationError).
func (s *Store) SetValidationError(ctx context.Context, subID, code, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE subscriptions
		SET options = jsonb_set(options, '{eventgrid,validation_error}', to_jsonb($3::text)), updated_at = now()
		WHERE id = $1 AND deleted_at IS NULL AND options->'eventgrid'->>'validation_code' = $2`, subID, code, reason)
	if err != nil {
		return fmt.Errorf("store: set validation error: %w", err)
	}
	return nil
}

// UnstartedOf returns up to limit deliveries of a subscription whose
// workflows were never started, oldest first.
func (s *Store) UnstartedOf(ctx context.Context, subID string, limit int) ([]Delivery, error) {
	ds := []Delivery{}
	err := s.db.SelectContext(ctx, &ds, `SELECT `+deliveryCols+` FROM deliveries
		WHERE subscription_id = $1 AND NOT started ORDER BY created_at, id LIMIT $2`, subID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: unstarted deliveries of %s: %w", subID, err)
	}
	return ds, nil
}

// EventFields are the schema fields an event may carry besides hookrelay's own.
type EventFields struct {
	DataVersion     string
	Source          string // Event Grid's topic, CloudEvents' source
	DataContentType string
	Extensions      RawJSON // CloudEvents extension attributes, a JSON object
}

// DeadLetterOf returns the dead letter made for a delivery.
func (s *Store) DeadLetterOf(ctx context.Context, deliveryID string) (DeadLetter, error) {
	var l DeadLetter
	err := s.db.GetContext(ctx, &l, `SELECT `+deadLetterCols+` FROM dead_letters l
		JOIN events e ON e.id = l.event_id WHERE l.delivery_id = $1`, deliveryID)
	if err != nil {
		return DeadLetter{}, notFound(err, "dead letter of delivery", deliveryID)
	}
	return l, nil
}

// SubscriptionByID returns a subscription, deleted or not: deliveries in
// flight still need theirs.
func (s *Store) SubscriptionByID(ctx context.Context, id string) (Subscription, error) {
	var sub Subscription
	err := s.db.GetContext(ctx, &sub, `SELECT `+subscriptionCols+`, `+accountQueueModeSQL+`
		FROM subscriptions s WHERE id = $1`, id)
	if err != nil {
		return Subscription{}, notFound(err, "subscription", id)
	}
	return sub, nil
}
