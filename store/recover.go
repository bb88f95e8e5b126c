package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/workflows"
)

// recoverableSQL lists the statuses a recovery redrives: the deliveries that
// ended without reaching their receiver and are not kept for a pull.
var recoverableSQL = policies.SQLList([]policies.Status{policies.StatusDeadLettered, policies.StatusDropped})

// Recovery is what Recover redrove.
type Recovery struct {
	// Redriven are the fresh deliveries made, one per recovered delivery
	// (its previous_id).
	Redriven []Delivery
	// More is true when more deliveries of the window are left to recover.
	More bool
}

// Recover redrives, as fresh deliveries linked to them, at most f.Limit of
// the account's dead-lettered or dropped deliveries of f's endpoint or
// subscription that ended within [f.Since, f.Until) and have no follow-up
// yet (never retried, redriven or recovered): each is recovered once, so
// calling it again redrives nothing twice. Deliveries of deleted
// subscriptions are left alone. On an error, Redriven holds what was made.
func (s *Store) Recover(ctx context.Context, account string, f ListFilter) (Recovery, error) {
	limit := f.Limit
	f.Status, f.Type, f.After, f.Ended, f.Limit = "", "", "", true, limit+1
	f.EventTypes, f.Policy, f.Newest = nil, "", false
	where, args := f.where("d", "deliveries", account)
	q := `SELECT ` + prefixed("d", deliveryCols) + ` FROM deliveries d WHERE ` + where +
		` AND d.status IN ` + recoverableSQL +
		` AND NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.previous_id = d.id)
		  AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NULL)` +
		fmt.Sprintf(` ORDER BY d.finished_at, d.id LIMIT $%d`, len(args))
	var found []Delivery
	if err := s.db.SelectContext(ctx, &found, q, args...); err != nil {
		return Recovery{}, fmt.Errorf("store: recoverable deliveries: %w", err)
	}
	out := Recovery{Redriven: []Delivery{}, More: len(found) > limit}
	if out.More {
		found = found[:limit]
	}
	inSequenceOrder(found)
	for _, prev := range found {
		d, err := s.followUp(ctx, prev, recoverRule)
		if errors.Is(err, ErrConflict) {
			continue // followed up since it was found: by a retry or another recovery
		}
		if err != nil {
			return out, err
		}
		out.Redriven = append(out.Redriven, d)
	}
	return out, nil
}

// Replay stores one new delivery of the account's event (by the id it was
// published with) per subscription matching its type now, as a publish of it
// would: queued for an inactive subscription.
// Each call makes new deliveries, each with a workflow of its own.
func (s *Store) Replay(ctx context.Context, account, externalID string) ([]Delivery, error) {
	var ev Event
	err := s.db.GetContext(ctx, &ev, `SELECT `+eventCols+` FROM events
		WHERE account_id = $1 AND external_id = $2`, account, externalID)
	if err != nil {
		return nil, notFound(err, "event", externalID)
	}
	ds, err := fanOut(ctx, s.db, s.keys, ev)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		ds[i].WorkflowID = workflows.DeliveryWorkflowID(ev.ID, ds[i].SubscriptionID, ds[i].ID)
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := sequence(ctx, tx, ds); err != nil {
			return err
		}
		return insertDeliveries(ctx, tx, ds)
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}
