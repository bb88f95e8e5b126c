package activities

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Signature headers, as in the Standard Webhooks specification: a receiver
// recomputes the signature with its subscription's signing secret and rejects
// requests whose signature or timestamp does not check out.
const (
	HeaderWebhookID        = "Webhook-Id"
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	HeaderWebhookSignature = "Webhook-Signature"
)

// Signature is the value of the Webhook-Signature header for a request with
// this id, timestamp (Unix seconds) and body: "v1," and the base64 of
// HMAC-SHA256(key, id + "." + timestamp + "." + body), where the key is the
// base64-decoded part of the secret after "whsec_", as Standard Webhooks'
// libraries expect.
func Signature(secret, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, signingKey(secret))
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// signingKey decodes a "whsec_<base64>" secret; any other secret is its own key.
func signingKey(secret string) []byte {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return []byte(secret)
	}
	return key
}

// sign sets the signature headers on req; a subscription without a secret
// sends unsigned requests.
func sign(req *http.Request, secret, id string, body []byte, now time.Time) {
	if secret == "" {
		return
	}
	ts := now.Unix()
	req.Header.Set(HeaderWebhookID, id)
	req.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderWebhookSignature, Signature(secret, id, ts, body))
}
