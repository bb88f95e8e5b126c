package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/hookrelay/hookrelay/secrets"
)

// sealedSecrets are a subscription's signing secrets as stored (migration
// 00022): ciphertexts sealed for the subscription's id, each beside the id
// of the key that sealed it ("" for plain text from before encryption).
// Only the store opens them (openSecrets), where a secret is needed.
type sealedSecrets struct {
	SealedSecret   string `db:"signing_secret"`
	SecretKeyID    string `db:"signing_secret_key"`
	SealedPrevious string `db:"previous_signing_secret"`
	PreviousKeyID  string `db:"previous_signing_secret_key"`
}

// UseKeys makes s seal and open stored secrets with ring: give every store
// of a process the same ring (its cache of opened secrets is the process's)
// before it is used. A store without keys refuses to make a secret.
func (s *Store) UseKeys(ring *secrets.Ring) { s.keys = ring }

// Keys is the ring s seals and opens stored secrets with.
func (s *Store) Keys() *secrets.Ring { return s.keys }

// openSecrets opens with keys the current and previous signing secrets ss
// of the subscription id. Its error names the subscription and the key id, never
// a secret: a ciphertext copied from another row, or sealed under a key
// this process lacks, fails here rather than signing with a wrong key.
func openSecrets(keys *secrets.Ring, id string, ss sealedSecrets) (current, previous string, err error) {
	current, err = keys.Open(secrets.Sealed{KeyID: ss.SecretKeyID, Text: ss.SealedSecret}, id)
	if err != nil {
		return "", "", fmt.Errorf("store: signing secret of subscription %s: %w", id, err)
	}
	if ss.SealedPrevious == "" {
		return current, "", nil
	}
	previous, err = keys.Open(secrets.Sealed{KeyID: ss.PreviousKeyID, Text: ss.SealedPrevious}, id)
	if err != nil {
		return "", "", fmt.Errorf("store: previous signing secret of subscription %s: %w", id, err)
	}
	return current, previous, nil
}

// newHMACSecret returns a new whsec_ secret: 32 random bytes in hex, the
// shape migration 00005 gave them.
func newHMACSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("store: random secret: %w", err)
	}
	return "whsec_" + hex.EncodeToString(b[:]), nil
}

// newKey is a new key of scheme for the subscription id: the secret in
// plain text (for the answer that shows it once), sealed, and for Ed25519
// its public key.
func (s *Store) newKey(scheme, id string) (plain string, sealed secrets.Sealed, public string, err error) {
	switch scheme {
	case SchemeHMAC:
		plain, err = newHMACSecret()
	case SchemeEd25519:
		plain, public, err = newEd25519Key()
	default:
		err = fmt.Errorf("store: unknown signature scheme %q", scheme)
	}
	if err != nil {
		return "", secrets.Sealed{}, "", err
	}
	sealed, err = s.keys.Seal(plain, id)
	if err != nil {
		return "", secrets.Sealed{}, "", fmt.Errorf("store: seal the signing secret: %w", err)
	}
	return plain, sealed, public, nil
}

// RevealSubscription is GetSubscription with the signing secret opened into
// SigningSecret, for the route that shows it on an explicit request.
func (s *Store) RevealSubscription(ctx context.Context, account, id string) (Subscription, error) {
	sub, err := s.GetSubscription(ctx, account, id)
	if err != nil {
		return sub, err
	}
	sub.SigningSecret, _, err = openSecrets(s.keys, sub.ID, sealedSecrets{SealedSecret: sub.SealedSecret, SecretKeyID: sub.SecretKeyID})
	return sub, err
}
