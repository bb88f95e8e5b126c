package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// Rotation overlap bounds (docs/signing.md#rotating-the-secret): by default the
// replaced secret keeps signing for a day, at most for a week.
const (
	DefaultRotationOverlap = 24 * time.Hour
	MaxRotationOverlap     = 7 * 24 * time.Hour
)

// RotateRequest is the optional body of
// POST /v1/subscriptions/{id}/secret/rotate.
type RotateRequest struct {
	// OverlapSeconds is how long the replaced secret keeps signing next to
	// the new one: 0 to MaxRotationOverlap, DefaultRotationOverlap if absent.
	OverlapSeconds *int64 `json:"overlap_seconds"`
	// SignatureScheme is the new key's scheme; the current one if absent.
	SignatureScheme string `json:"signature_scheme"`
}

// overlap checks the request and returns its overlap.
func (r *RotateRequest) overlap() (time.Duration, error) {
	if r.SignatureScheme != "" {
		if err := checkScheme(&r.SignatureScheme); err != nil {
			return 0, err
		}
	}
	if r.OverlapSeconds == nil {
		return DefaultRotationOverlap, nil
	}
	limit := int64(MaxRotationOverlap / time.Second)
	if n := *r.OverlapSeconds; n < 0 || n > limit {
		return 0, invalid("overlap_seconds", "overlap_seconds must be between 0 and %d (7 days), got %d", limit, n)
	}
	return time.Duration(*r.OverlapSeconds) * time.Second, nil
}

// checkScheme defaults an empty scheme to HMAC and refuses unknown ones.
func checkScheme(scheme *string) error {
	switch *scheme {
	case "":
		*scheme = store.SchemeHMAC
	case store.SchemeHMAC, store.SchemeEd25519:
	default:
		return invalid("signature_scheme", "signature_scheme must be %q or %q, got %q",
			store.SchemeHMAC, store.SchemeEd25519, *scheme)
	}
	return nil
}

// shownSecret is the secret a subscription's creator and reveals may see:
// an HMAC secret, never an Ed25519 private key.
func shownSecret(sub store.Subscription) string {
	if sub.SignatureScheme == store.SchemeEd25519 {
		return ""
	}
	return sub.SigningSecret
}

// subscriptionKey is what a receiver needs to verify a subscription's
// deliveries: its HMAC secret or its Ed25519 public key.
type subscriptionKey struct {
	ID               string `json:"id"`
	SignatureScheme  string `json:"signature_scheme"`
	SigningSecret    string `json:"signing_secret,omitempty"`
	SigningPublicKey string `json:"signing_public_key,omitempty"`
	// PreviousSecretExpiresAt is when the secret a rotation replaced stops
	// signing (rotations only).
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
}

// keyView is sub's subscriptionKey.
func keyView(sub store.Subscription) subscriptionKey {
	return subscriptionKey{ID: sub.ID, SignatureScheme: sub.SignatureScheme,
		SigningSecret: shownSecret(sub), SigningPublicKey: sub.SigningPublicKey}
}

// rotateSecret answers POST /v1/subscriptions/{id}/secret/rotate: a new
// signing key, shown once as creation shows it, while the replaced one keeps
// signing for the overlap (every delivery carries both signatures).
func (s *Server) rotateSecret(c echo.Context) error {
	var req RotateRequest
	if c.Request().ContentLength != 0 {
		if err := decode(c, &req); err != nil {
			return err
		}
	}
	overlap, err := req.overlap()
	if err != nil {
		return err
	}
	sub, err := s.Store.RotateSigningKey(c.Request().Context(), account(c), c.Param("id"), req.SignatureScheme, overlap)
	if err != nil {
		return err
	}
	view := keyView(sub)
	view.PreviousSecretExpiresAt = sub.PreviousSecretExpiresAt
	return c.JSON(http.StatusOK, view)
}
