package store

import (
	"context"
	"fmt"
	"time"
)

// DeadLetter is a delivery that could not be made, kept for inspection and
// redrive.
type DeadLetter struct {
	ID                string     `db:"id" json:"id"`
	AccountID         string     `db:"account_id" json:"-"`
	DeliveryID        string     `db:"delivery_id" json:"delivery_id"`
	EventID           string     `db:"event_id" json:"-"`
	ExternalEventID   string     `db:"external_id" json:"event_id"`
	EventType         string     `db:"type" json:"event_type"`
	SubscriptionID    string     `db:"subscription_id" json:"subscription_id"`
	EndpointID        string     `db:"endpoint_id" json:"endpoint_id"`
	Reason            string     `db:"reason" json:"reason"`
	LastStatusCode    int        `db:"last_status_code" json:"last_status_code"`
	LastError         string     `db:"last_error" json:"last_error,omitempty"`
	Attempts          int        `db:"attempts" json:"attempts"`
	CreatedAt         time.Time  `db:"created_at" json:"created_at"`
	RedrivenAt        *time.Time `db:"redriven_at" json:"redriven_at,omitempty"`
	RedriveDeliveryID *string    `db:"redrive_delivery_id" json:"redrive_delivery_id,omitempty"`
}

const deadLetterCols = `l.id, l.account_id, l.delivery_id, l.event_id, e.external_id, e.type,
	l.subscription_id, l.endpoint_id, l.reason, l.last_status_code, l.last_error, l.attempts,
	l.created_at, l.redriven_at, l.redrive_delivery_id`

// DeadLetterFilter narrows ListDeadLetters (its Status, Type, Ended,
// EventTypes and Policy are not used).
type DeadLetterFilter = ListFilter

// ListDeadLetters returns the account's dead letters matching f, oldest
// first unless f.Newest.
func (s *Store) ListDeadLetters(ctx context.Context, account string, f DeadLetterFilter) ([]DeadLetter, error) {
	f.Status, f.Type, f.Ended, f.EventTypes, f.Policy = "", "", false, nil, ""
	where, args := f.where("l", "dead_letters", account)
	q := `SELECT ` + deadLetterCols + ` FROM dead_letters l JOIN events e ON e.id = l.event_id
		WHERE ` + where + f.order("l") + fmt.Sprintf(` LIMIT $%d`, len(args))
	out := []DeadLetter{}
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("store: list dead letters: %w", err)
	}
	return out, nil
}

// GetDeadLetter returns the account's dead letter with this id.
func (s *Store) GetDeadLetter(ctx context.Context, account, id string) (DeadLetter, error) {
	var l DeadLetter
	err := s.db.GetContext(ctx, &l, `SELECT `+deadLetterCols+` FROM dead_letters l
		JOIN events e ON e.id = l.event_id WHERE l.id = $1 AND l.account_id = $2`, id, account)
	if err != nil {
		return DeadLetter{}, notFound(err, "dead letter", id)
	}
	return l, nil
}
