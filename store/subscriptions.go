package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// RawJSON is a JSON document kept as it was given (a JSONB column).
type RawJSON []byte

// Scan implements sql.Scanner.
func (j *RawJSON) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case []byte:
		*j = append((*j)[:0], v...)
	case string:
		*j = RawJSON(v)
	default:
		return fmt.Errorf("store: cannot scan %T into RawJSON", src)
	}
	return nil
}

// Value implements driver.Valuer.
func (j RawJSON) Value() (driver.Value, error) {
	if len(j) == 0 {
		return "null", nil
	}
	return string(j), nil
}

// MarshalJSON implements json.Marshaler.
func (j RawJSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (j *RawJSON) UnmarshalJSON(b []byte) error {
	*j = append((*j)[:0], b...)
	return nil
}

// Subscription sends events of some types to one URL under one policy.
type Subscription struct {
	ID          string         `db:"id" json:"id"`
	AccountID   string         `db:"account_id" json:"account_id"`
	EndpointID  string         `db:"endpoint_id" json:"endpoint_id"`
	Name        *string        `db:"name" json:"name,omitempty"`
	URL         string         `db:"url" json:"url"`
	EventTypes  pq.StringArray `db:"event_types" json:"event_types"`
	Policy      string         `db:"policy" json:"policy"`
	RetryPolicy RawJSON        `db:"retry_policy" json:"retry_policy"`
	Active      bool           `db:"active" json:"active"`
	// Ordered delivers the subscription's events one at a time per
	// ordering key, in publication order (docs/ordering.md).
	Ordered bool    `db:"ordered" json:"ordered"`
	Options RawJSON `db:"options" json:"options,omitempty"`
	// SigningSecret signs every delivery (see activities.Signature): a
	// whsec_ secret (SchemeHMAC) or a whsk_ private key (SchemeEd25519).
	// Stored sealed (sealedSecrets), it is here in plain text only where
	// the store opened it to be shown: creation, rotation, RevealSubscription.
	SigningSecret string `db:"-" json:"signing_secret"`
	// SignatureScheme is SchemeHMAC or SchemeEd25519 (store/signing.go).
	SignatureScheme string `db:"signature_scheme" json:"signature_scheme"`
	// SigningPublicKey is an Ed25519 subscription's whpk_ public key.
	SigningPublicKey string `db:"signing_public_key" json:"signing_public_key,omitempty"`
	// sealedSecrets are its secret and the one a rotation replaced (which
	// also signs until PreviousSecretExpiresAt) as stored; never shown.
	sealedSecrets           `json:"-"`
	PreviousSecretExpiresAt *time.Time `db:"previous_secret_expires_at" json:"previous_secret_expires_at,omitempty"`
	CreatedAt               time.Time  `db:"created_at" json:"created_at"`
	UpdatedAt               time.Time  `db:"updated_at" json:"updated_at"`
	// AccountQueueMode is whether its account is in SAP's queue mode
	// (docs/sap.md#modes), where its deliveries are pushed once and queued
	// if that fails: loaded (accountQueueModeSQL) only where deliveries are
	// started from it (publishing, SubscriptionByID, the sweeper); false
	// elsewhere.
	AccountQueueMode bool `db:"account_queue_mode" json:"-"`
	// EndpointRules, when set, are the circuit-breaker rules an endpoint
	// this subscription makes (a new URL) takes (health.RulesOf); an
	// existing endpoint keeps its own. Never stored with the subscription.
	EndpointRules RawJSON `db:"-" json:"-"`
}

// accountQueueModeSQL loads Subscription.AccountQueueMode of the
// subscription s.
const accountQueueModeSQL = `(SELECT a.mode = 'queue' FROM accounts a WHERE a.id = s.account_id) AS account_queue_mode`

const subscriptionCols = `id, account_id, endpoint_id, name, url, event_types, policy, signing_secret,
	signing_secret_key, signature_scheme, signing_public_key, previous_signing_secret,
	previous_signing_secret_key, previous_secret_expires_at,
	retry_policy, active, ordered, options, created_at, updated_at`

// CreateSubscription stores sub, creating its endpoint (one per URL within
// the account) if needed. It fills in ID, EndpointID, the times and a new
// signing key of sub.SignatureScheme (SchemeHMAC when empty), stored sealed
// and in sub.SigningSecret in plain text, to be shown once.
func (s *Store) CreateSubscription(ctx context.Context, sub *Subscription) error {
	if sub.ID == "" {
		sub.ID = NewID("sub")
	}
	if sub.SignatureScheme == "" {
		sub.SignatureScheme = SchemeHMAC
	}
	if len(sub.RetryPolicy) == 0 {
		sub.RetryPolicy = RawJSON("{}")
	}
	if len(sub.Options) == 0 {
		sub.Options = RawJSON("{}")
	}
	plain, sealed, public, err := s.newKey(sub.SignatureScheme, sub.ID)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		epID, err := upsertEndpoint(ctx, tx, sub.AccountID, sub.URL, sub.EndpointRules)
		if err != nil {
			return err
		}
		sub.EndpointID = epID
		err = tx.GetContext(ctx, sub, `INSERT INTO subscriptions
			(id, account_id, endpoint_id, name, url, event_types, policy, retry_policy, active, options, ordered,
			 signature_scheme, signing_secret, signing_secret_key, signing_public_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			RETURNING `+subscriptionCols,
			sub.ID, sub.AccountID, sub.EndpointID, sub.Name, sub.URL, sub.EventTypes, sub.Policy, sub.RetryPolicy,
			sub.Active, sub.Options, sub.Ordered, sub.SignatureScheme, sealed.Text, sealed.KeyID, public)
		return uniqueConflict(err, "subscription")
	})
	if err == nil {
		sub.SigningSecret = plain
	}
	return err
}

// UpdateSubscription stores sub's URL, event types, policy, retry policy,
// activity, order and options over the live subscription sub.ID. A new URL moves
// the subscription to that URL's endpoint, and its deliveries still in
// flight with it: the new endpoint's health gates and releases them.
func (s *Store) UpdateSubscription(ctx context.Context, sub *Subscription) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		epID, err := upsertEndpoint(ctx, tx, sub.AccountID, sub.URL, sub.EndpointRules)
		if err != nil {
			return err
		}
		sub.EndpointID = epID
		err = tx.QueryRowxContext(ctx, `UPDATE subscriptions SET endpoint_id = $2, url = $3,
				event_types = $4, policy = $5, retry_policy = $6, active = $7, options = $8,
				ordered = $9, updated_at = now()
			WHERE id = $1 AND deleted_at IS NULL RETURNING created_at, updated_at`,
			sub.ID, sub.EndpointID, sub.URL, sub.EventTypes, sub.Policy, sub.RetryPolicy,
			sub.Active, sub.Options, sub.Ordered).Scan(&sub.CreatedAt, &sub.UpdatedAt)
		if err != nil {
			return notFound(err, "subscription", sub.ID)
		}
		_, err = tx.ExecContext(ctx, `UPDATE deliveries SET endpoint_id = $2, updated_at = now()
			WHERE subscription_id = $1 AND status IN `+inFlightSQL+`
			  AND endpoint_id <> $2`, sub.ID, sub.EndpointID)
		if err != nil {
			return fmt.Errorf("store: move deliveries to the new endpoint: %w", err)
		}
		return nil
	})
}

// upsertEndpoint returns the id of the account's endpoint of url, making it
// with rules (none: NULL, taken on their first read) if there is none.
func upsertEndpoint(ctx context.Context, tx *sqlx.Tx, account, url string, rules RawJSON) (string, error) {
	var id string
	err := tx.QueryRowxContext(ctx, `INSERT INTO endpoints (id, account_id, url, rules)
		VALUES ($1, $2, $3, NULLIF($4::jsonb, 'null'::jsonb))
		ON CONFLICT (account_id, url) DO UPDATE SET updated_at = endpoints.updated_at
		RETURNING id`, NewID("ep"), account, url, rules).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("store: upsert endpoint: %w", err)
	}
	return id, nil
}

// GetSubscription returns the account's subscription with this id.
func (s *Store) GetSubscription(ctx context.Context, account, id string) (Subscription, error) {
	var sub Subscription
	err := s.db.GetContext(ctx, &sub, `SELECT `+subscriptionCols+` FROM subscriptions
		WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, id, account)
	if err != nil {
		return Subscription{}, notFound(err, "subscription", id)
	}
	return sub, nil
}

// ListSubscriptions returns the account's subscriptions, oldest first.
func (s *Store) ListSubscriptions(ctx context.Context, account string) ([]Subscription, error) {
	subs := []Subscription{}
	err := s.db.SelectContext(ctx, &subs, `SELECT `+subscriptionCols+` FROM subscriptions
		WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, account)
	if err != nil {
		return nil, fmt.Errorf("store: list subscriptions: %w", err)
	}
	return subs, nil
}

// uniqueConflict maps a unique violation to ErrConflict.
func uniqueConflict(err error, what string) error {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "23505" {
		return fmt.Errorf("%s already exists: %w", what, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}
