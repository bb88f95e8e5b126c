package api

import (
	"net/http"
	"testing"

	svix "github.com/svix/svix-webhooks/go"
)

// verifyWithSvix checks r with the Svix Go library and secret.
func verifyWithSvix(t *testing.T, secret string, r signedRequest) error {
	t.Helper()
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(r.body, r.header)
}

// TestSvixVerifiesDeliveries: a receiver verifying with the Svix Go library
// (which reads the unbranded webhook-* headers hookrelay sends) accepts
// real deliveries' v1 signatures, with the new and the old secret during a
// rotation's overlap, and refuses a changed body.
//
// v1a (ed25519): neither the Svix library nor the Standard Webhooks one
// verifies it (both skip every signature but v1), so an ed25519
// subscription's deliveries fail both, and verify with crypto/ed25519 and
// the subscription's public key (as TestEd25519Deliveries shows in full).
func TestSvixVerifiesDeliveries(t *testing.T) {
	t.Parallel()
	e, srv, got := signingAPI(t)
	sub := subscribeSigned(t, e, srv.URL, "sign.svix", "")
	id, old := fmtString(sub["id"]), fmtString(sub["signing_secret"])
	r := deliverOne(t, e, got, "sign.svix", "svix-0")
	if err := verifyWithSvix(t, old, r); err != nil {
		t.Fatalf("Svix refuses a delivery: %v (%v)", err, r.header)
	}
	tampered := signedRequest{header: r.header, body: append([]byte(nil), r.body...)}
	tampered.body[len(tampered.body)-2] ^= 1
	if verifyWithSvix(t, old, tampered) == nil {
		t.Fatal("Svix accepts a changed body")
	}
	_, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+id+"/secret/rotate", "")
	r = deliverOne(t, e, got, "sign.svix", "svix-1")
	if verifyWithSvix(t, old, r) != nil || verifyWithSvix(t, fmtString(rot["signing_secret"]), r) != nil {
		t.Fatalf("in the overlap, Svix refuses a secret: signatures %q", signatures(r))
	}

	ed := subscribeSigned(t, e, srv.URL, "sign.svix-ed", "ed25519")
	pub := publicKeyOf(t, e, fmtString(ed["id"]))
	r = deliverOne(t, e, got, "sign.svix-ed", "svix-ed")
	if !verifiesV1a(t, pub, r, 0) {
		t.Fatalf("v1a signature %q does not verify with crypto/ed25519", signatures(r))
	}
	// Any whsec_ secret: the libraries find no v1 signature to check.
	if verifyWithSvix(t, old, r) == nil || verifyWith(t, old, r) == nil {
		t.Fatal("a library that does not know v1a accepted an ed25519 delivery")
	}
}
