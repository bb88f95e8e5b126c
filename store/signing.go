package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Signature schemes (docs/signing.md): SchemeHMAC signs Standard
// Webhooks "v1" signatures with a whsec_ secret, SchemeEd25519 "v1a" ones
// with a whsk_ private key whose whpk_ public key receivers verify with.
const (
	SchemeHMAC    = "hmac-sha256"
	SchemeEd25519 = "ed25519"
)

// Key prefixes of the Standard Webhooks specification: a secret key is
// SecretKeyPrefix and the base64 of the 64-byte Ed25519 private key (seed
// and public key), a public key PublicKeyPrefix and the base64 of its 32
// bytes.
const (
	SecretKeyPrefix = "whsk_"
	PublicKeyPrefix = "whpk_"
)

// newEd25519Key returns a new key pair as whsk_ and whpk_ strings.
func newEd25519Key() (secret, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("store: ed25519 key: %w", err)
	}
	return SecretKeyPrefix + base64.StdEncoding.EncodeToString(priv),
		PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// setKey gives sub (fresh from the database, in tx) a new key of scheme,
// sealed (newKey), and reads it back into sub, with the new secret in plain
// text in sub.SigningSecret. With keep, its current secret becomes the
// previous one until now + overlap; without, it has none.
func (s *Store) setKey(ctx context.Context, tx *sqlx.Tx, sub *Subscription, scheme string, keep bool, overlap time.Duration) error {
	plain, sealed, public, err := s.newKey(scheme, sub.ID)
	if err != nil {
		return err
	}
	args := []any{sub.ID, sub.AccountID, scheme, sealed.Text, sealed.KeyID, public}
	previous := `previous_signing_secret = '', previous_signing_secret_key = '', previous_secret_expires_at = NULL`
	if keep {
		args = append(args, overlap.Seconds())
		previous = `previous_signing_secret = signing_secret, previous_signing_secret_key = signing_secret_key,
			previous_secret_expires_at = now() + make_interval(secs => $7::float8)`
	}
	err = tx.GetContext(ctx, sub, `UPDATE subscriptions SET `+previous+`, signature_scheme = $3,
			signing_secret = $4, signing_secret_key = $5, signing_public_key = $6, updated_at = now()
		WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING `+subscriptionCols, args...)
	if err != nil {
		return notFound(err, "subscription", sub.ID)
	}
	sub.SigningSecret = plain
	return nil
}

// RotateSigningKey gives the account's subscription id a new signing key of
// scheme (its own when empty). Its current secret keeps signing, next to
// the new one, for overlap; a rotation within that time replaces it.
func (s *Store) RotateSigningKey(ctx context.Context, account, id, scheme string, overlap time.Duration) (Subscription, error) {
	sub := Subscription{ID: id, AccountID: account}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if scheme == "" {
			err := tx.GetContext(ctx, &scheme, `SELECT signature_scheme FROM subscriptions
				WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE`, id, account)
			if err != nil {
				return notFound(err, "subscription", id)
			}
		}
		return s.setKey(ctx, tx, &sub, scheme, true, overlap)
	})
	return sub, err
}
