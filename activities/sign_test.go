package activities_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookrelay/hookrelay/activities"
)

// TestSignature: each kind of secret gives its scheme's signature, checked
// independently: v1 by the Standard Webhooks library, v1a by
// crypto/ed25519 with the public key; a malformed secret key signs nothing;
// SignatureHeader lists the signatures in order, space-separated.
func TestSignature(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	const hmacSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	id, ts, body := "evt_1", time.Now().Unix(), []byte(`{"a":1}`)
	content := []byte(id + "." + strconv.FormatInt(ts, 10) + "." + string(body))
	for _, c := range []struct {
		name, secret string
		check        func(sig string) bool
	}{
		{"hmac", hmacSecret, func(sig string) bool { return verifyV1(t, hmacSecret, id, ts, body, sig) == nil }},
		{"ed25519 private key", "whsk_" + b64(priv), func(sig string) bool { return verifyV1a(pub, content, sig) }},
		{"ed25519 seed", "whsk_" + b64(priv.Seed()), func(sig string) bool { return verifyV1a(pub, content, sig) }},
		{"malformed key", "whsk_" + b64([]byte("short")), func(sig string) bool { return sig == "" }},
		{"not base64", "whsk_!!", func(sig string) bool { return sig == "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if sig := activities.Signature(c.secret, id, ts, body); !c.check(sig) {
				t.Fatalf("signature %q does not check out", sig)
			}
		})
	}
	newSig, oldSig := activities.Signature("whsk_"+b64(priv), id, ts, body), activities.Signature(hmacSecret, id, ts, body)
	if got := activities.SignatureHeader([]string{"whsk_" + b64(priv), "", hmacSecret}, id, ts, body); got != newSig+" "+oldSig {
		t.Fatalf("header %q, want %q", got, newSig+" "+oldSig)
	}
	if verifyV1(t, "whsec_"+b64([]byte("another key")), id, ts, body, oldSig) == nil || verifyV1a(pub, []byte("other"), newSig) {
		t.Fatal("a signature verifies with another key or content")
	}
}

// verifyV1 checks a Webhook-Signature value with the Standard Webhooks
// library.
func verifyV1(t *testing.T, secret, id string, ts int64, body []byte, sig string) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Webhook-Id", id)
	h.Set("Webhook-Timestamp", strconv.FormatInt(ts, 10))
	h.Set("Webhook-Signature", sig)
	return wh.Verify(body, h)
}

// verifyV1a tells whether sig is one "v1a," Ed25519 signature of content.
func verifyV1a(pub ed25519.PublicKey, content []byte, sig string) bool {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "v1a,"))
	return strings.HasPrefix(sig, "v1a,") && err == nil && ed25519.Verify(pub, content, raw)
}
