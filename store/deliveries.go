package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/workflows"
)

// finalSQL and inFlightSQL are the SQL lists of final and in-flight
// delivery statuses (policies.FinalStatuses, policies.InFlightStatuses).
var (
	finalSQL    = policies.SQLList(policies.FinalStatuses)
	inFlightSQL = policies.SQLList(policies.InFlightStatuses)
)

// endSQL is the one way a delivery's row ends, in FinishDelivery and with
// the success that delivers it (CompleteAttempts, CompleteSuccesses): the
// SET list giving it status and reason (SQL expressions), no next attempt,
// and finishedAt; each statement applies it only to a row whose status is
// not final yet (finalSQL). An ended delivery has no workflow left to
// start: it is marked started too, so that a first attempt begun from a
// target handed over (FirstAttempts), which does not mark it, and that
// delivered it leaves MarkStarted nothing to write.
func endSQL(status, reason, finishedAt string) string {
	return `status = ` + status + `, final_reason = ` + reason + `, next_attempt_at = NULL,
		finished_at = ` + finishedAt + `, started = true, updated_at = now()`
}

// SetInFlight records an in-flight status (retrying, waiting) and when the
// next attempt is due.
func (s *Store) SetInFlight(ctx context.Context, id string, status policies.Status, next *time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE deliveries SET status = $2, next_attempt_at = $3,
		updated_at = now() WHERE id = $1 AND status NOT IN `+finalSQL,
		id, status, next)
	if err != nil {
		return fmt.Errorf("store: set delivery status: %w", err)
	}
	return nil
}

// SetWaiting records that a delivery waits for its endpoint and returns the
// endpoint's state as of that moment, read in the same statement: a delivery
// that finds it enabled again re-attempts at once instead of waiting for a
// release that was sent before it was recorded as waiting. A finished
// delivery is left alone ("" state).
func (s *Store) SetWaiting(ctx context.Context, id string) (string, error) {
	var state string
	err := s.db.GetContext(ctx, &state, `UPDATE deliveries d SET status = 'waiting', next_attempt_at = NULL,
			updated_at = now()
		WHERE d.id = $1 AND d.status NOT IN `+finalSQL+`
		RETURNING (SELECT p.state FROM subscriptions s JOIN endpoints p ON p.id = s.endpoint_id
			WHERE s.id = d.subscription_id)`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: set delivery waiting: %w", err)
	}
	return state, nil
}

// Finish is how a delivery ended.
type Finish struct {
	DeliveryID string
	Status     policies.Status // delivered, dead_lettered, dropped or queued
	Reason     string
	LastStatus int
	LastError  string
	// DeactivateSubscription deactivates the delivery's subscription in the
	// same transaction (policies.DeactivatesSubscription).
	DeactivateSubscription bool
}

// Finished is what FinishDelivery did.
type Finished struct {
	// Delivery is the delivery as it ended; nil when it had ended before
	// (a retried call), which changes nothing.
	Delivery *Delivery
	// DeadLetterID is the dead letter made, if one was.
	DeadLetterID string
	// Raised is the operational event the ending raised, if any
	// (hookrelay.delivery.dead_lettered or .queued).
	Raised Raised
}

// FinishDelivery records a delivery's final status. A dead-lettered one gets a
// dead letter; with f.DeactivateSubscription its subscription is deactivated;
// either raises its operational event, in the same transaction. Calling it
// again for a finished delivery changes nothing.
func (s *Store) FinishDelivery(ctx context.Context, f Finish) (Finished, error) {
	var out Finished
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var d Delivery
		err := tx.GetContext(ctx, &d, `UPDATE deliveries SET `+endSQL("$2", "$3", "now()")+`
			WHERE id = $1 AND status NOT IN `+finalSQL+`
			RETURNING `+deliveryCols, f.DeliveryID, f.Status, f.Reason)
		if err != nil {
			return notFound(err, "unfinished delivery", f.DeliveryID)
		}
		out.Delivery = &d
		if err := closeOpenAttempts(ctx, tx, d.ID); err != nil {
			return err
		}
		if f.DeactivateSubscription {
			if err := deactivateSubscription(ctx, tx, d.SubscriptionID); err != nil {
				return err
			}
		}
		if f.Status == policies.StatusDeadLettered {
			if out.DeadLetterID, err = insertDeadLetter(ctx, tx, d, f); err != nil {
				return err
			}
		}
		out.Raised, err = raiseDeliveryEvent(ctx, tx, d, f, out.DeadLetterID)
		return err
	})
	if err != nil && isNotFound(err) {
		return Finished{}, nil // already finished: idempotent
	}
	return out, err
}

func insertDeadLetter(ctx context.Context, tx *sqlx.Tx, d Delivery, f Finish) (string, error) {
	id := NewID("dl")
	_, err := tx.ExecContext(ctx, `INSERT INTO dead_letters (id, account_id, delivery_id, event_id,
			subscription_id, endpoint_id, reason, last_status_code, last_error, attempts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		id, d.AccountID, d.ID, d.EventID, d.SubscriptionID, d.EndpointID, f.Reason,
		f.LastStatus, f.LastError, d.Attempts)
	if err != nil {
		return "", fmt.Errorf("store: insert dead letter: %w", err)
	}
	return id, nil
}

// deactivateSubscription stops pushes to a subscription: its later events are
// queued until it is reactivated (docs/policies.md#sap).
func deactivateSubscription(ctx context.Context, tx *sqlx.Tx, subscriptionID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE subscriptions SET active = false, updated_at = now()
		WHERE id = $1`, subscriptionID)
	if err != nil {
		return fmt.Errorf("store: deactivate subscription: %w", err)
	}
	return nil
}

// GetDelivery returns the account's delivery with this id.
func (s *Store) GetDelivery(ctx context.Context, account, id string) (Delivery, error) {
	var d Delivery
	err := s.db.GetContext(ctx, &d, `SELECT `+deliveryCols+` FROM deliveries
		WHERE id = $1 AND account_id = $2`, id, account)
	if err != nil {
		return Delivery{}, notFound(err, "delivery", id)
	}
	return d, nil
}

// EventDetail is an event with each of its deliveries and their attempts.
type EventDetail struct {
	Event      Event            `json:"event"`
	Deliveries []DeliveryDetail `json:"deliveries"`
}

// DeliveryDetail is a delivery with its attempts.
type DeliveryDetail struct {
	Delivery
	AttemptList []Attempt `json:"attempt_list"`
}

// GetEvent returns the account's event (by the id it was published with) and
// its deliveries.
func (s *Store) GetEvent(ctx context.Context, account, externalID string) (EventDetail, error) {
	var out EventDetail
	err := s.db.GetContext(ctx, &out.Event, `SELECT `+eventCols+` FROM events
		WHERE account_id = $1 AND external_id = $2`, account, externalID)
	if err != nil {
		return out, notFound(err, "event", externalID)
	}
	var ds []Delivery
	if err := s.db.SelectContext(ctx, &ds, `SELECT `+deliveryCols+` FROM deliveries
		WHERE event_id = $1 ORDER BY created_at, id`, out.Event.ID); err != nil {
		return out, fmt.Errorf("store: event deliveries: %w", err)
	}
	out.Deliveries = make([]DeliveryDetail, 0, len(ds))
	for _, d := range ds {
		as, err := s.Attempts(ctx, d.ID)
		if err != nil {
			return out, err
		}
		out.Deliveries = append(out.Deliveries, DeliveryDetail{Delivery: d, AttemptList: as})
	}
	return out, nil
}

// newDelivery is a fresh pending delivery of of.EventID to of.SubscriptionID
// (with of's account, event type, endpoint and policy), with its id and its
// workflow's id; prev is the delivery it follows up, if any.
func newDelivery(of Delivery, prev *Delivery) Delivery {
	d := Delivery{
		ID: NewID("dlv"), AccountID: of.AccountID, EventID: of.EventID, EventType: of.EventType,
		SubscriptionID: of.SubscriptionID, EndpointID: of.EndpointID, Policy: of.Policy,
		Status: policies.StatusPending,
	}
	followUpID := ""
	if prev != nil {
		d.PreviousID, followUpID = &prev.ID, d.ID
	}
	d.WorkflowID = workflows.DeliveryWorkflowID(d.EventID, d.SubscriptionID, followUpID)
	return d
}

// followUp is a fresh delivery of prev's event to prev's subscription, linked
// to prev: a redrive, a retry or a redelivery.
func followUp(prev Delivery) Delivery { return newDelivery(prev, &prev) }
