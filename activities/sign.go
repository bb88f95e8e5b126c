package activities

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookrelay/hookrelay/store"
)

// Signature headers, as in the Standard Webhooks specification: a receiver
// recomputes the signature with its subscription's signing secret (or checks
// it with its public key) and rejects requests whose signature or timestamp
// does not check out.
const (
	HeaderWebhookID        = "Webhook-Id"
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	HeaderWebhookSignature = "Webhook-Signature"
)

// Signature is one signature of a request with this id, timestamp (Unix
// seconds) and body. A whsk_ secret (store.SecretKeyPrefix) gives "v1a,"
// and the base64 of its Ed25519 signature of id + "." + timestamp + "." +
// body, or "" if the key is malformed. Any other secret gives "v1," and the
// base64 of HMAC-SHA256(key, the same content), where the key is the
// base64-decoded part of the secret after "whsec_", as Standard Webhooks'
// libraries expect.
func Signature(secret, id string, timestamp int64, body []byte) string {
	content := make([]byte, 0, len(id)+len(body)+24)
	content = append(content, id+"."+strconv.FormatInt(timestamp, 10)+"."...)
	content = append(content, body...)
	if strings.HasPrefix(secret, store.SecretKeyPrefix) {
		key := ed25519Key(secret)
		if key == nil {
			return ""
		}
		return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(key, content))
	}
	mac := hmac.New(sha256.New, signingKey(secret))
	mac.Write(content)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignatureHeader is the Webhook-Signature value for these secrets: each
// one's signature, space-separated, in order, skipping empty secrets.
func SignatureHeader(secrets []string, id string, timestamp int64, body []byte) string {
	var sigs []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if sig := Signature(s, id, timestamp, body); sig != "" {
			sigs = append(sigs, sig)
		}
	}
	return strings.Join(sigs, " ")
}

// signingKey decodes a "whsec_<base64>" secret; any other secret is its own key.
func signingKey(secret string) []byte {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return []byte(secret)
	}
	return key
}

// ed25519Key decodes a whsk_ secret: the base64 of a 64-byte private key or
// of its 32-byte seed; nil if it is neither.
func ed25519Key(secret string) ed25519.PrivateKey {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, store.SecretKeyPrefix))
	switch {
	case err != nil:
		return nil
	case len(raw) == ed25519.PrivateKeySize:
		return ed25519.PrivateKey(raw)
	case len(raw) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw)
	default:
		return nil
	}
}

// sign sets the signature headers on req: the signature of the
// subscription's secret, then, while a rotation's overlap lasts, that of the
// secret it replaced. A subscription without a secret sends unsigned
// requests.
func sign(req *http.Request, t store.Target, body []byte, now time.Time) {
	ts := now.Unix()
	sig := SignatureHeader([]string{t.SigningSecret, t.PreviousSigningSecret}, t.ExternalID, ts, body)
	if sig == "" {
		return
	}
	req.Header.Set(HeaderWebhookID, t.ExternalID)
	req.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderWebhookSignature, sig)
}
