package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// Seal encrypts plain under the ring's first key for the row rowID (the
// associated data): Open decrypts it for that row only.
func (r *Ring) Seal(plain, rowID string) (Sealed, error) {
	if r == nil || len(r.keys) == 0 {
		return Sealed{}, ErrNoKeys
	}
	k := r.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("secrets: nonce: %w", err)
	}
	out := k.aead.Seal(nonce, nonce, []byte(plain), []byte(rowID))
	return Sealed{KeyID: k.id, Text: base64.RawStdEncoding.EncodeToString(out)}, nil
}

// Open decrypts s, sealed for the row rowID, through the ring's cache. A
// secret without a key id is plain text from before encryption, returned
// as it is (hookrelay encrypts such rows at start: store.Reseal). Errors
// (ErrNoKeys, ErrUnknownKey, ErrOpen) name the key id, never the secret.
func (r *Ring) Open(s Sealed, rowID string) (string, error) {
	if s.KeyID == "" {
		return s.Text, nil
	}
	if r == nil || len(r.keys) == 0 {
		return "", ErrNoKeys
	}
	ck := cacheKey{row: rowID, s: s}
	if plain, ok := r.cache.get(ck); ok {
		return plain, nil
	}
	plain, err := r.open(s, rowID)
	if err != nil {
		return "", err
	}
	r.cache.put(ck, plain)
	return plain, nil
}

// open decrypts s for rowID without the cache.
func (r *Ring) open(s Sealed, rowID string) (string, error) {
	k, ok := r.find(s.KeyID)
	if !ok {
		return "", fmt.Errorf("%w (key %s; this process has %v)", ErrUnknownKey, s.KeyID, r.IDs())
	}
	raw, err := base64.RawStdEncoding.DecodeString(s.Text)
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", fmt.Errorf("%w (key %s: not a ciphertext)", ErrOpen, s.KeyID)
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(rowID))
	if err != nil {
		return "", fmt.Errorf("%w (key %s, row %s)", ErrOpen, s.KeyID, rowID)
	}
	return string(plain), nil
}
