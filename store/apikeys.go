package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// APIKeyPrefix starts every API key, so that a leaked one is easy to find.
const APIKeyPrefix = "hr_"

// APIKey is an account's API key as listed: never the key itself, which is
// shown once, when it is created, and kept only as a hash.
type APIKey struct {
	ID        string     `db:"id" json:"id"`
	AccountID string     `db:"account_id" json:"account_id"`
	Name      string     `db:"name" json:"name"`
	CreatedAt time.Time  `db:"created_at" json:"created_at"`
	RevokedAt *time.Time `db:"revoked_at" json:"revoked_at,omitempty"`
}

const apiKeyCols = `id, account_id, name, created_at, revoked_at`

// CreateAPIKey stores a new key for the account and returns it with the key
// itself, which is not kept and cannot be shown again.
func (s *Store) CreateAPIKey(ctx context.Context, accountID, name string) (APIKey, string, error) {
	secret := APIKeyPrefix + newSecret()
	var k APIKey
	err := s.db.QueryRowxContext(ctx, `INSERT INTO api_keys (id, account_id, name, key_hash)
		VALUES ($1, $2, $3, $4) RETURNING `+apiKeyCols,
		NewID("key"), accountID, name, hashSecret(secret)).StructScan(&k)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "23503" { // foreign_key_violation
		return APIKey{}, "", fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	if err != nil {
		return APIKey{}, "", fmt.Errorf("store: create api key: %w", err)
	}
	return k, secret, nil
}

// ListAPIKeys returns the account's keys, revoked ones included, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string) ([]APIKey, error) {
	keys := []APIKey{}
	err := s.db.SelectContext(ctx, &keys, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey revokes one of the account's keys; revoking it again changes
// nothing.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, id string) (APIKey, error) {
	var k APIKey
	err := s.db.QueryRowxContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
		WHERE account_id = $1 AND id = $2 RETURNING `+apiKeyCols, accountID, id).StructScan(&k)
	return k, notFound(err, "api key", id)
}

// APIKeyHash is the form in which an API key is stored: its SHA-256, in hex.
func APIKeyHash(secret string) string { return hashSecret(secret) }

// ActiveKeyHashes returns the stored hashes (APIKeyHash) of the account's
// keys that are not revoked, oldest first: what an Event Grid SAS token of
// the account may be signed with (api/eventgrid_sas.go).
func (s *Store) ActiveKeyHashes(ctx context.Context, accountID string) ([]string, error) {
	hashes := []string{}
	err := s.db.SelectContext(ctx, &hashes, `SELECT key_hash FROM api_keys
		WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: active key hashes of %s: %w", accountID, err)
	}
	return hashes, nil
}

// AuthenticateKey returns the id of the account whose live key secret is, or
// ErrUnauthorized.
func (s *Store) AuthenticateKey(ctx context.Context, secret string) (string, error) {
	k, err := s.APIKeyBySecret(ctx, secret)
	return k.AccountID, err
}

// APIKeyBySecret returns the live key whose secret this is, or
// ErrUnauthorized.
func (s *Store) APIKeyBySecret(ctx context.Context, secret string) (APIKey, error) {
	if !strings.HasPrefix(secret, APIKeyPrefix) {
		return APIKey{}, ErrUnauthorized
	}
	return s.liveKey(ctx, `key_hash = $1`, hashSecret(secret))
}

// LiveAPIKey returns the account's key with this id if it is not revoked,
// else ErrUnauthorized.
func (s *Store) LiveAPIKey(ctx context.Context, accountID, id string) (APIKey, error) {
	return s.liveKey(ctx, `account_id = $1 AND id = $2`, accountID, id)
}

// liveKey returns the unrevoked key matching cond, or ErrUnauthorized.
func (s *Store) liveKey(ctx context.Context, cond string, args ...any) (APIKey, error) {
	var k APIKey
	err := s.db.GetContext(ctx, &k, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE `+cond+` AND revoked_at IS NULL`, args...)
	if err != nil {
		if err = notFound(err, "api key", ""); isNotFound(err) {
			return APIKey{}, ErrUnauthorized
		}
		return APIKey{}, err
	}
	return k, nil
}
