package api

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// signedRequest is a request a signedReceiver got.
type signedRequest struct {
	header http.Header
	body   []byte
}

// newSignedReceiver is a real receiver on 127.0.0.1 that answers 200 and
// passes on every request it gets.
func newSignedReceiver(t *testing.T) (*httptest.Server, <-chan signedRequest) {
	got := make(chan signedRequest, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- signedRequest{header: r.Header.Clone(), body: b}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// deliverOne publishes an event of type typ with id and returns the request
// the receiver gets for it.
func deliverOne(t *testing.T, e *echo.Echo, got <-chan signedRequest, typ, id string) signedRequest {
	t.Helper()
	if code, ev := call(t, e, http.MethodPost, "/v1/events", fmt.Sprintf(`{"id":%q,"type":%q,"data":{"n":1}}`, id, typ)); code != http.StatusAccepted {
		t.Fatalf("publish %s: %d %v", id, code, ev)
	}
	select {
	case r := <-got:
		if r.header.Get("Webhook-Id") != id {
			t.Fatalf("got event %q, want %q", r.header.Get("Webhook-Id"), id)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for the delivery of %s", id)
		return signedRequest{}
	}
}

// signingAPI is the API with a real worker, and a signedReceiver.
func signingAPI(t *testing.T) (*echo.Echo, *httptest.Server, <-chan signedRequest) {
	t.Helper()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	srv, got := newSignedReceiver(t)
	return e, srv, got
}

// subscribeSigned subscribes url to typ with the signature scheme ("" for
// the default) and returns the answer.
func subscribeSigned(t *testing.T, e *echo.Echo, url, typ, scheme string) map[string]any {
	t.Helper()
	req := map[string]any{"url": url, "event_types": []string{typ}}
	if scheme != "" {
		req["signature_scheme"] = scheme
	}
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", mustJSON(t, req))
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	return sub
}

// verifyWith checks r with the Standard Webhooks library and secret.
func verifyWith(t *testing.T, secret string, r signedRequest) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(r.body, r.header)
}

// signatures are r's Webhook-Signature values.
func signatures(r signedRequest) []string {
	return strings.Split(r.header.Get("Webhook-Signature"), " ")
}

// TestRotationDeliveries: after a rotation, real deliveries through a real
// worker carry both signatures, the new one first: a receiver verifying with
// the Standard Webhooks library accepts them with the old secret and with
// the new one. After a rotation without overlap, only the newest verifies.
func TestRotationDeliveries(t *testing.T) {
	t.Parallel()
	e, srv, got := signingAPI(t)
	sub := subscribeSigned(t, e, srv.URL, "sign.rotate", "")
	id, old := fmtString(sub["id"]), fmtString(sub["signing_secret"])
	if r := deliverOne(t, e, got, "sign.rotate", "rot-0"); len(signatures(r)) != 1 || verifyWith(t, old, r) != nil {
		t.Fatalf("before rotation: %v", r.header)
	}
	_, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", "")
	current := fmtString(rot["signing_secret"])
	r := deliverOne(t, e, got, "sign.rotate", "rot-1")
	sigs := signatures(r)
	if len(sigs) != 2 || verifyWith(t, old, r) != nil || verifyWith(t, current, r) != nil {
		t.Fatalf("in the overlap: signatures %q; old secret: %v; new secret: %v", sigs, verifyWith(t, old, r), verifyWith(t, current, r))
	}
	first := signedRequest{header: r.header.Clone(), body: r.body}
	first.header.Set("Webhook-Signature", sigs[0])
	if verifyWith(t, current, first) != nil {
		t.Fatalf("the first signature %q is not the new secret's", sigs[0])
	}
	_, rot = call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", `{"overlap_seconds":0}`)
	newest := fmtString(rot["signing_secret"])
	r = deliverOne(t, e, got, "sign.rotate", "rot-2")
	if len(signatures(r)) != 1 || verifyWith(t, newest, r) != nil {
		t.Fatalf("after a rotation without overlap: %q", signatures(r))
	}
	for _, replaced := range []string{current, old} {
		if err := verifyWith(t, replaced, r); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Fatalf("a replaced secret still verifies: %v", err)
		}
	}
}

// TestEd25519Deliveries: an ed25519 subscription's real deliveries carry v1a
// signatures that verify with crypto/ed25519 and the public key read from
// the API; after a rotation, with the new and the old public key; after a
// rotation to hmac-sha256 without overlap, only its v1 signature is sent.
func TestEd25519Deliveries(t *testing.T) {
	t.Parallel()
	e, srv, got := signingAPI(t)
	sub := subscribeSigned(t, e, srv.URL, "sign.ed", "ed25519")
	id := fmtString(sub["id"])
	oldPub := publicKeyOf(t, e, id)
	if r := deliverOne(t, e, got, "sign.ed", "ed-1"); len(signatures(r)) != 1 || !verifiesV1a(t, oldPub, r, 0) {
		t.Fatalf("signatures %q do not verify with %x", signatures(r), oldPub)
	}
	call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", "")
	newPub := publicKeyOf(t, e, id)
	r := deliverOne(t, e, got, "sign.ed", "ed-2")
	if len(signatures(r)) != 2 || !verifiesV1a(t, newPub, r, 0) || !verifiesV1a(t, oldPub, r, 1) || verifiesV1a(t, oldPub, r, 0) {
		t.Fatalf("in the overlap: signatures %q, new key %x, old key %x", signatures(r), newPub, oldPub)
	}
	_, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", `{"signature_scheme":"hmac-sha256","overlap_seconds":0}`)
	r = deliverOne(t, e, got, "sign.ed", "ed-3")
	if sigs := signatures(r); len(sigs) != 1 || !strings.HasPrefix(sigs[0], "v1,") || verifyWith(t, fmtString(rot["signing_secret"]), r) != nil {
		t.Fatalf("after moving to hmac-sha256: signatures %q", sigs)
	}
}

// publicKeyOf reads a subscription's public key through the API.
func publicKeyOf(t *testing.T, e *echo.Echo, id string) ed25519.PublicKey {
	t.Helper()
	_, sub := call(t, e, http.MethodGet, "/v1/subscriptions/"+id, "")
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(fmtString(sub["signing_public_key"]), "whpk_"))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		t.Fatalf("public key of %v (%v)", sub, err)
	}
	return raw
}

// verifiesV1a tells whether r's i-th signature is a v1a signature by pub.
func verifiesV1a(t *testing.T, pub ed25519.PublicKey, r signedRequest, i int) bool {
	t.Helper()
	sigs := signatures(r)
	if i >= len(sigs) || !strings.HasPrefix(sigs[i], "v1a,") {
		return false
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sigs[i], "v1a,"))
	content := r.header.Get("Webhook-Id") + "." + r.header.Get("Webhook-Timestamp") + "." + string(r.body)
	return err == nil && ed25519.Verify(pub, []byte(content), sig)
}
