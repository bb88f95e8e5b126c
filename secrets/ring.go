// Package secrets encrypts the secrets hookrelay stores and must use again
// (signing secrets, Ed25519 private keys, storage credentials) under a key
// ring (docs/security.md#secrets-at-rest): AES-256-GCM from the standard
// library, with the id of the row that holds a secret as associated data, so
// that a ciphertext copied onto another row does not decrypt there. The first
// key of a ring encrypts; every key of it decrypts. Depends on the standard
// library only.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key: 32 bytes, for AES-256.
const KeySize = 32

var (
	// ErrNoKeys is returned by a nil or empty Ring asked to seal or open.
	ErrNoKeys = errors.New("secrets: no encryption key configured")
	// ErrUnknownKey is returned when a secret was sealed under a key the
	// ring does not hold.
	ErrUnknownKey = errors.New("secrets: sealed under a key this process does not have")
	// ErrOpen is returned when a secret does not decrypt: it was sealed for
	// another row, or altered.
	ErrOpen = errors.New("secrets: does not decrypt for this row (copied from another row, or altered)")
)

// Sealed is a secret as stored: the id of the key it was sealed under and
// its ciphertext (base64 of the nonce and the sealed bytes). A zero KeyID
// means Text is plain text, stored before encryption (see Ring.Open).
type Sealed struct {
	KeyID string
	Text  string
}

// key is one AES-256-GCM key and its id.
type key struct {
	id   string
	aead cipher.AEAD
}

// Ring is an ordered set of keys: the first seals, every one opens. It
// caches what it opened (bounded), so a secret used on every delivery is
// decrypted once per process. Safe for concurrent use.
type Ring struct {
	keys  []key
	cache *cache
}

// NewKey returns a new random key, base64-encoded as ParseRing reads it.
func NewKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("secrets: random key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ParseRing reads a key ring: base64 keys of 32 bytes each, separated by
// commas, spaces or line breaks, the key that seals first. Empty text is
// an empty ring (nil, nil). The error never contains key material.
func ParseRing(text string) (*Ring, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
	if len(fields) == 0 {
		return nil, nil
	}
	r := &Ring{cache: newCache(cacheSize)}
	for i, f := range fields {
		k, err := parseKey(f)
		if err != nil {
			return nil, fmt.Errorf("secrets: key %d of %d: %w", i+1, len(fields), err)
		}
		if r.has(k.id) {
			return nil, fmt.Errorf("secrets: key %d of %d (%s) is listed twice", i+1, len(fields), k.id)
		}
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// parseKey decodes one base64 key (standard or URL alphabet, padded or not).
func parseKey(text string) (key, error) {
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil || len(raw) != KeySize {
		return key{}, fmt.Errorf("want the base64 of %d random bytes (`hookrelay secrets new-key` or `openssl rand -base64 32`)", KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, fmt.Errorf("gcm: %w", err)
	}
	return key{id: KeyID(raw), aead: aead}, nil
}

// KeyID is the id of the key raw: "k" and 12 hex digits of a SHA-256 of it,
// which says which key sealed a secret and tells nothing of the key.
func KeyID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("hookrelay key id\x00"), raw...))
	return "k" + hex.EncodeToString(sum[:6])
}

// Primary is the id of the key that seals ("" for an empty ring).
func (r *Ring) Primary() string {
	if r == nil || len(r.keys) == 0 {
		return ""
	}
	return r.keys[0].id
}

// IDs are the ids of the ring's keys, the one that seals first.
func (r *Ring) IDs() []string {
	if r == nil {
		return nil
	}
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

// has reports whether the ring holds the key id.
func (r *Ring) has(id string) bool {
	_, ok := r.find(id)
	return ok
}

// find returns the key id.
func (r *Ring) find(id string) (key, bool) {
	if r == nil {
		return key{}, false
	}
	for _, k := range r.keys {
		if k.id == id {
			return k, true
		}
	}
	return key{}, false
}
