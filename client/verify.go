package client

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers hookrelay signs a delivery with (Standard Webhooks).
const (
	HeaderWebhookID        = "Webhook-Id"
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	HeaderWebhookSignature = "Webhook-Signature"
)

// Tolerance is how far a delivery's Webhook-Timestamp may be from the
// receiver's clock, as Standard Webhooks' libraries allow.
const Tolerance = 5 * time.Minute

// Verify's errors, wrapped with what was found.
var (
	// ErrNoSignature: a signature header is missing or empty.
	ErrNoSignature = errors.New("no signature")
	// ErrTimestamp: Webhook-Timestamp is unreadable or further than
	// Tolerance from now (a replayed or delayed request).
	ErrTimestamp = errors.New("timestamp out of tolerance")
	// ErrSignature: no signature of the header checks out with the key.
	ErrSignature = errors.New("signature does not match")
	// ErrKey: the secret or public key is malformed.
	ErrKey = errors.New("malformed key")
)

// Verify checks a delivery's signature headers against its raw body. key is
// the subscription's signing secret (whsec_…, hmac-sha256 subscriptions:
// v1 signatures, HMAC-SHA256) or its public key (whpk_…, ed25519
// subscriptions: v1a signatures). The request passes when one of
// Webhook-Signature's space-separated signatures of the key's scheme
// checks out (during a secret rotation it carries two) and its
// Webhook-Timestamp is within Tolerance of now.
func Verify(key string, h http.Header, body []byte) error {
	return verifyAt(key, h, body, time.Now())
}

func verifyAt(key string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp), h.Get(HeaderWebhookSignature)
	if id == "" || ts == "" || strings.TrimSpace(sigs) == "" {
		return fmt.Errorf("hookrelay: %w: want %s, %s and %s", ErrNoSignature, HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature)
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("hookrelay: %w: %s %q", ErrTimestamp, HeaderWebhookTimestamp, ts)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("hookrelay: %w: %s is %s away", ErrTimestamp, HeaderWebhookTimestamp, d.Round(time.Second))
	}
	content := []byte(id + "." + ts + "." + string(body))
	check, version, err := checker(key, content)
	if err != nil {
		return err
	}
	for _, sig := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(sig, ",")
		raw, err := base64.StdEncoding.DecodeString(b64)
		if ok && v == version && err == nil && check(raw) {
			return nil
		}
	}
	return fmt.Errorf("hookrelay: %w: no %s signature checks out with this key", ErrSignature, version)
}

// checker is how a signature is checked with key, and the version of the
// signatures it checks.
func checker(key string, content []byte) (func(sig []byte) bool, string, error) {
	if pub, ok := strings.CutPrefix(key, "whpk_"); ok {
		raw, err := base64.StdEncoding.DecodeString(pub)
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return nil, "", fmt.Errorf("hookrelay: %w: a whpk_ key is the base64 of a %d-byte Ed25519 public key", ErrKey, ed25519.PublicKeySize)
		}
		return func(sig []byte) bool { return ed25519.Verify(raw, content, sig) }, "v1a", nil
	}
	if key == "" {
		return nil, "", fmt.Errorf("hookrelay: %w: the key is empty", ErrKey)
	}
	mac := hmac.New(sha256.New, hmacKey(key))
	mac.Write(content)
	want := mac.Sum(nil)
	return func(sig []byte) bool { return hmac.Equal(sig, want) }, "v1", nil
}

// hmacKey is the key of a whsec_ secret: the base64-decoded part after the
// prefix; a secret of another form is its own key, as hookrelay signs with
// it.
func hmacKey(secret string) []byte {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	if key, err := base64.StdEncoding.DecodeString(b64); ok && err == nil {
		return key
	}
	return []byte(secret)
}
