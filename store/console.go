package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// The reads of the web console (console/) that the /v1 API has no route
// for, and its signing key.

// EndpointSummary is an endpoint as the console lists it: with its last
// state change and how many deliveries wait for it.
type EndpointSummary struct {
	Endpoint
	// Reason and ChangedAt are the last state change's, if any.
	Reason        string     `db:"reason"`
	ChangedAt     *time.Time `db:"changed_at"`
	Waiting       int64      `db:"waiting"`
	Subscriptions int64      `db:"subscriptions"`
}

// MaxListedEndpoints bounds ListEndpoints.
const MaxListedEndpoints = 1000

// ListEndpoints returns the account's endpoints, oldest first, at most
// MaxListedEndpoints; only those of ids when ids is not empty.
func (s *Store) ListEndpoints(ctx context.Context, account string, ids []string) ([]EndpointSummary, error) {
	out := []EndpointSummary{}
	if ids == nil {
		ids = []string{} // not NULL, which would match nothing
	}
	err := s.db.SelectContext(ctx, &out, `SELECT `+prefixed("p", endpointCols)+`,
			COALESCE(c.reason, '') AS reason, c.changed_at,
			(SELECT count(*) FROM deliveries d WHERE d.endpoint_id = p.id AND d.status = 'waiting') AS waiting,
			(SELECT count(*) FROM subscriptions s WHERE s.endpoint_id = p.id AND s.deleted_at IS NULL) AS subscriptions
		FROM endpoints p
		LEFT JOIN LATERAL (SELECT reason, changed_at FROM endpoint_state_changes
			WHERE endpoint_id = p.id ORDER BY id DESC LIMIT 1) c ON true
		WHERE p.account_id = $1 AND (cardinality($2::text[]) = 0 OR p.id = ANY($2))
		ORDER BY p.created_at, p.id LIMIT $3`, account, pq.Array(ids), MaxListedEndpoints)
	if err != nil {
		return nil, fmt.Errorf("store: list endpoints: %w", err)
	}
	return out, nil
}

// EventOf returns the account's event by its own id (Delivery.EventID).
func (s *Store) EventOf(ctx context.Context, account, id string) (Event, error) {
	var ev Event
	err := s.db.GetContext(ctx, &ev, `SELECT `+eventCols+` FROM events
		WHERE id = $1 AND account_id = $2`, id, account)
	if err != nil {
		return Event{}, notFound(err, "event", id)
	}
	return ev, nil
}

// EventTypes lists the event types the account's subscriptions name and
// its latest thousand events carry, "*" aside, in order.
func (s *Store) EventTypes(ctx context.Context, account string) ([]string, error) {
	out := []string{}
	err := s.db.SelectContext(ctx, &out, `SELECT t FROM (
			SELECT type AS t FROM (SELECT type FROM events WHERE account_id = $1
				ORDER BY created_at DESC LIMIT 1000) e
			UNION SELECT unnest(event_types) FROM subscriptions WHERE account_id = $1 AND deleted_at IS NULL
		) u WHERE t <> '*' ORDER BY t`, account)
	if err != nil {
		return nil, fmt.Errorf("store: event types: %w", err)
	}
	return out, nil
}

// ConsoleKey returns the web console's signing key, made on first use and
// the same for every process on this database.
func (s *Store) ConsoleKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("store: console key: %w", err)
	}
	// Two statements: the read must see a key another process inserted
	// while this one waited on the conflict.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO console_keys (id, secret) VALUES (1, $1)
		ON CONFLICT (id) DO NOTHING`, fresh); err != nil {
		return nil, fmt.Errorf("store: console key: %w", err)
	}
	var key []byte
	if err := s.db.GetContext(ctx, &key, `SELECT secret FROM console_keys WHERE id = 1`); err != nil {
		return nil, fmt.Errorf("store: console key: %w", err)
	}
	return key, nil
}

// ListAccounts returns the accounts, oldest first, at most limit.
func (s *Store) ListAccounts(ctx context.Context, limit int) ([]Account, error) {
	out := []Account{}
	err := s.db.SelectContext(ctx, &out, `SELECT `+accountCols+` FROM accounts
		ORDER BY created_at, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list accounts: %w", err)
	}
	return out, nil
}
