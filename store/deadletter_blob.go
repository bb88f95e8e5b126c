package store

import (
	"context"
	"time"
)

// DeadLetterFacts are what a dead letter's blob says besides the event: the
// dead letter, when its event was published and how its last attempt went
// (docs/eventgrid.md#dead-letters-in-azure-blob-storage).
type DeadLetterFacts struct {
	DeadLetter
	PublishedAt   time.Time  `db:"published_at"`
	LastAttemptAt *time.Time `db:"last_attempt_at"`
	LastErrorKind string     `db:"last_error_kind"`
}

// DeadLetterFacts returns the facts of the account's dead letter id.
func (s *Store) DeadLetterFacts(ctx context.Context, account, id string) (DeadLetterFacts, error) {
	var f DeadLetterFacts
	err := s.db.GetContext(ctx, &f, `SELECT `+deadLetterCols+`, e.created_at AS published_at,
			a.started_at AS last_attempt_at, COALESCE(a.error_kind, '') AS last_error_kind
		FROM dead_letters l JOIN events e ON e.id = l.event_id
		LEFT JOIN LATERAL (SELECT started_at, error_kind FROM attempts
			WHERE delivery_id = l.delivery_id ORDER BY attempt DESC, id DESC LIMIT 1) a ON true
		WHERE l.id = $1 AND l.account_id = $2`, id, account)
	if err != nil {
		return DeadLetterFacts{}, notFound(err, "dead letter", id)
	}
	return f, nil
}
