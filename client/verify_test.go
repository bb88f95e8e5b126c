package client

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// signed is a request's headers with this id, timestamp and
// Webhook-Signature.
func signed(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderWebhookSignature, sig)
	return h
}

// TestVerifyV1: a v1 signature made by the Standard Webhooks library
// verifies with its whsec_ secret, also beside another signature (a
// rotation's); another secret, another body, a stale timestamp and missing
// headers do not.
func TestVerifyV1(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now, body := time.Now(), []byte(`{"order":1042}`)
	sig, err := wh.Sign("evt_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key of thirty-two bytes!"))
	for _, c := range []struct {
		name string
		key  string
		h    http.Header
		body string
		want error
	}{
		{"good", secret, signed("evt_1", now, sig), string(body), nil},
		{"rotation", secret, signed("evt_1", now, "v1,AAAA "+sig), string(body), nil},
		{"other secret", other, signed("evt_1", now, sig), string(body), ErrSignature},
		{"other body", secret, signed("evt_1", now, sig), `{"order":1043}`, ErrSignature},
		{"other id", secret, signed("evt_2", now, sig), string(body), ErrSignature},
		{"stale", secret, signed("evt_1", now.Add(-6*time.Minute), sig), string(body), ErrTimestamp},
		{"future", secret, signed("evt_1", now.Add(6*time.Minute), sig), string(body), ErrTimestamp},
		{"unsigned", secret, http.Header{}, string(body), ErrNoSignature},
		{"v1a only", secret, signed("evt_1", now, "v1a,"+sig[3:]), string(body), ErrSignature},
		{"empty key", "", signed("evt_1", now, sig), string(body), ErrKey},
	} {
		if err := verifyAt(c.key, c.h, []byte(c.body), now); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestVerifyV1a: a v1a signature made with crypto/ed25519 verifies with
// its whpk_ public key, and not with another key or a malformed one.
func TestVerifyV1a(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	now, body := time.Now(), []byte(`{"a":1}`)
	content := "evt_9." + strconv.FormatInt(now.Unix(), 10) + "." + string(body)
	sig := "v1a," + b64(ed25519.Sign(priv, []byte(content)))
	h := signed("evt_9", now, "v1,bm90IHRoaXMgb25l "+sig)
	if err := verifyAt("whpk_"+b64(pub), h, body, now); err != nil {
		t.Fatalf("Verify with the public key: %v", err)
	}
	if err := verifyAt("whpk_"+b64(otherPub), h, body, now); !errors.Is(err, ErrSignature) {
		t.Fatalf("Verify with another public key: %v", err)
	}
	if err := verifyAt("whpk_"+b64(pub[:16]), h, body, now); !errors.Is(err, ErrKey) {
		t.Fatalf("Verify with a short key: %v", err)
	}
}

// TestRetryAfter: seconds and HTTP dates are read; anything else is a
// second.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"7": 7 * time.Second, "0": 0, "": time.Second, "soon": time.Second, "-3": time.Second,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := RetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}
