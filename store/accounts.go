package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Account modes (docs/policies.md#sap): retry pushes events and retries them
// under the subscription's policy; queue queues every event at once for the
// account to pull.
const (
	ModeRetry = "retry"
	ModeQueue = "queue"
)

// ErrUnauthorized is returned when credentials match no account.
var ErrUnauthorized = errors.New("unauthorized")

// Account is a tenant. Its secrets are never kept, only their hashes, and
// never shown after creation.
type Account struct {
	ID        string    `db:"id" json:"id"`
	Name      string    `db:"name" json:"name"`
	Mode      string    `db:"mode" json:"mode"`
	CreatedAt time.Time `db:"created_at" json:"createdDate"`
}

// Credentials are an account's organization and user secrets, as given to
// its creator once.
type Credentials struct {
	OrganizationSecret string `json:"organizationSecret"`
	UserSecret         string `json:"userSecret"`
}

const accountCols = `id, name, mode, created_at`

// newSecret returns 32 random bytes, hex-encoded.
func newSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("store: crypto/rand: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// hashSecret is the stored form of a secret: hex SHA-256.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateAccount stores a new account in retry mode with fresh secrets and
// returns it with the secrets, which are not kept and cannot be shown again.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, Credentials, error) {
	cr := Credentials{OrganizationSecret: newSecret(), UserSecret: newSecret()}
	a := Account{ID: NewID("acct"), Name: name, Mode: ModeRetry}
	err := s.db.QueryRowxContext(ctx, `INSERT INTO accounts (id, name, mode, org_secret_hash, user_secret_hash)
		VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
		a.ID, a.Name, a.Mode, hashSecret(cr.OrganizationSecret), hashSecret(cr.UserSecret),
	).Scan(&a.CreatedAt)
	if err != nil {
		return Account{}, Credentials{}, fmt.Errorf("store: create account: %w", err)
	}
	return a, cr, nil
}

// GetAccount returns the account with this id.
func (s *Store) GetAccount(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `SELECT `+accountCols+` FROM accounts WHERE id = $1`, id)
	if err != nil {
		return Account{}, notFound(err, "account", id)
	}
	return a, nil
}

// SetAccountMode switches the account's event notification mode (retry or
// queue). Events published later follow the new mode.
func (s *Store) SetAccountMode(ctx context.Context, id, mode string) (Account, error) {
	if mode != ModeRetry && mode != ModeQueue {
		return Account{}, fmt.Errorf("store: mode %q is neither retry nor queue", mode)
	}
	var a Account
	err := s.db.GetContext(ctx, &a, `UPDATE accounts SET mode = $2 WHERE id = $1
		RETURNING `+accountCols, id, mode)
	if err != nil {
		return Account{}, notFound(err, "account", id)
	}
	return a, nil
}

// Authenticate returns the account whose organization and user secrets these
// are, or ErrUnauthorized. The secrets' hashes are compared in constant time.
func (s *Store) Authenticate(ctx context.Context, orgSecret, userSecret string) (Account, error) {
	if orgSecret == "" || userSecret == "" {
		return Account{}, ErrUnauthorized
	}
	orgHash, userHash := hashSecret(orgSecret), hashSecret(userSecret)
	var rows []struct {
		Account
		OrgHash  string `db:"org_secret_hash"`
		UserHash string `db:"user_secret_hash"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT `+accountCols+`, org_secret_hash, user_secret_hash
		FROM accounts WHERE org_secret_hash = $1 AND org_secret_hash <> ''`, orgHash)
	if err != nil {
		return Account{}, fmt.Errorf("store: authenticate: %w", err)
	}
	for _, r := range rows {
		orgOK := subtle.ConstantTimeCompare([]byte(r.OrgHash), []byte(orgHash))
		userOK := subtle.ConstantTimeCompare([]byte(r.UserHash), []byte(userHash))
		if orgOK&userOK == 1 {
			return r.Account, nil
		}
	}
	return Account{}, ErrUnauthorized
}
