package activities

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
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
// HMAC-SHA256(secret, id + "." + timestamp + "." + body).
func Signature(secret, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
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
