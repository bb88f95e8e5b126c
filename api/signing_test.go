package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// TestRotateSecretAPI: a rotation answers a new secret, shown as creation
// shows it, and until when the replaced one still signs (a day by default);
// reveal-secret and reads agree with it; bad bodies and unknown ids change
// nothing.
func TestRotateSecretAPI(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url":"https://a.example/hook","event_types":["*"]}`)
	id, old := sub["id"].(string), sub["signing_secret"].(string)
	if sub["signature_scheme"] != "hmac-sha256" || sub["signing_public_key"] != nil || sub["previous_secret_expires_at"] != nil {
		t.Fatalf("creation: %v", sub)
	}
	assertRotateRefused(t, e, id, old)
	before := time.Now()
	code, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", "")
	secret, _ := rot["signing_secret"].(string)
	expires, err := time.Parse(time.RFC3339Nano, fmtString(rot["previous_secret_expires_at"]))
	if code != http.StatusOK || !strings.HasPrefix(secret, "whsec_") || secret == old || rot["id"] != id ||
		rot["signature_scheme"] != "hmac-sha256" || err != nil || expires.Before(before.Add(DefaultRotationOverlap-time.Minute)) {
		t.Fatalf("rotate: %d %v (%v)", code, rot, err)
	}
	if _, got := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/reveal-secret", ""); got["signing_secret"] != secret {
		t.Fatalf("reveal after rotation: %v", got)
	}
	_, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id, "")
	if got["signing_secret"] != nil || got["previous_secret_expires_at"] != rot["previous_secret_expires_at"] {
		t.Fatalf("get after rotation: %v", got)
	}
	code, rot = call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", `{"overlap_seconds":604800}`)
	if code != http.StatusOK || rot["signing_secret"] == secret {
		t.Fatalf("rotate for a week: %d %v", code, rot)
	}
}

// assertRotateRefused: out-of-range overlaps and unknown schemes are 400s
// naming the field, an unknown subscription a 404, and none changes the
// secret.
func assertRotateRefused(t *testing.T, e *echo.Echo, id, secret string) {
	t.Helper()
	for body, field := range map[string]string{
		`{"overlap_seconds":-1}`:         "overlap_seconds",
		`{"overlap_seconds":604801}`:     "overlap_seconds",
		`{"overlap_seconds":"1"}`:        "overlap_seconds",
		`{"signature_scheme":"rsa"}`:     "signature_scheme",
		`{"overlap":1}`:                  "overlap",
		`{"overlap_seconds":1.5}`:        "overlap_seconds",
		`{"signature_scheme":"ED25519"}`: "signature_scheme",
	} {
		code, got := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", body)
		if code != http.StatusBadRequest || jpath(got, "error", "field") != field {
			t.Errorf("rotate %s: %d %v, want 400 naming %s", body, code, got, field)
		}
	}
	if code, got := call(t, e, http.MethodPost, "/v1/subscriptions/sub_nope/secret/rotate", ""); code != http.StatusNotFound {
		t.Errorf("rotate an unknown subscription: %d %v", code, got)
	}
	if _, got := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/reveal-secret", ""); got["signing_secret"] != secret {
		t.Fatalf("refused rotations changed the secret: %v", got)
	}
}

// TestEd25519SubscriptionAPI: an ed25519 subscription shows its public key
// in every read and never its private key, in no answer; PATCH keeps the
// scheme (another is a 400 pointing to the rotation); a rotation gives it a
// new key pair, or moves it to HMAC.
func TestEd25519SubscriptionAPI(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url":"https://a.example/hook","event_types":["*"],"signature_scheme":"ed25519"}`)
	id, pub := fmtString(sub["id"]), fmtString(sub["signing_public_key"])
	if code != http.StatusCreated || sub["signature_scheme"] != "ed25519" || !strings.HasPrefix(pub, "whpk_") || sub["signing_secret"] != nil {
		t.Fatalf("creation: %d %v", code, sub)
	}
	stored, err := st.RevealSubscription(context.Background(), store.DefaultAccount, id)
	if err != nil || !strings.HasPrefix(stored.SigningSecret, "whsk_") {
		t.Fatalf("stored key %q (%v)", stored.SigningSecret, err)
	}
	private := strings.TrimPrefix(stored.SigningSecret, "whsk_")
	answers := []map[string]any{sub}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/subscriptions/" + id, ""},
		{http.MethodGet, "/v1/subscriptions", ""},
		{http.MethodPost, "/v1/subscriptions/" + id + "/reveal-secret", ""},
		{http.MethodPatch, "/v1/subscriptions/" + id, `{"signature_scheme":"ed25519","active":true}`},
	} {
		code, got := call(t, e, r.method, r.path, r.body)
		if code != http.StatusOK || !strings.Contains(mustJSON(t, got), pub) {
			t.Errorf("%s %s: %d %v, want the public key", r.method, r.path, code, got)
		}
		answers = append(answers, got)
	}
	assertSchemeRefused(t, e, id)
	answers = append(answers, assertEd25519Rotations(t, e, id, pub)...)
	for _, a := range answers {
		if strings.Contains(mustJSON(t, a), private) || strings.Contains(mustJSON(t, a), "whsk_") {
			t.Fatalf("an answer shows the private key: %v", a)
		}
	}
}

// assertSchemeRefused: an unknown scheme is a 400 naming signature_scheme
// at creation, and so is another scheme in a PATCH of subscription id,
// pointing to the rotation.
func assertSchemeRefused(t *testing.T, e *echo.Echo, id string) {
	t.Helper()
	code, bad := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url":"https://a.example/hook","event_types":["*"],"signature_scheme":"rsa"}`)
	if code != http.StatusBadRequest || jpath(bad, "error", "field") != "signature_scheme" {
		t.Errorf("unknown scheme: %d %v", code, bad)
	}
	code, patched := call(t, e, http.MethodPatch, "/v1/subscriptions/"+id, `{"signature_scheme":"hmac-sha256"}`)
	if code != http.StatusBadRequest || jpath(patched, "error", "field") != "signature_scheme" ||
		!strings.Contains(fmtString(jpath(patched, "error", "message")), "/secret/rotate") {
		t.Errorf("PATCH to another scheme: %d %v", code, patched)
	}
}

// assertEd25519Rotations rotates an ed25519 subscription to a new key pair,
// then to HMAC, and returns the answers.
func assertEd25519Rotations(t *testing.T, e *echo.Echo, id, pub string) []map[string]any {
	t.Helper()
	code, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", `{"overlap_seconds":60}`)
	newPub := fmtString(rot["signing_public_key"])
	if code != http.StatusOK || !strings.HasPrefix(newPub, "whpk_") || newPub == pub || rot["signing_secret"] != nil ||
		rot["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate: %d %v", code, rot)
	}
	if _, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id, ""); got["signing_public_key"] != newPub {
		t.Fatalf("get after rotation: %v", got)
	}
	code, toHMAC := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", `{"signature_scheme":"hmac-sha256"}`)
	if code != http.StatusOK || toHMAC["signature_scheme"] != "hmac-sha256" || toHMAC["signing_public_key"] != nil ||
		!strings.HasPrefix(fmtString(toHMAC["signing_secret"]), "whsec_") {
		t.Fatalf("rotate to hmac-sha256: %d %v", code, toHMAC)
	}
	_, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id, "")
	if got["signature_scheme"] != "hmac-sha256" || got["signing_public_key"] != nil {
		t.Fatalf("get after moving to hmac-sha256: %v", got)
	}
	return []map[string]any{rot, toHMAC, got}
}

// fmtString is v if it is a string, else "".
func fmtString(v any) string {
	s, _ := v.(string)
	return s
}
