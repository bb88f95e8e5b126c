package api

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestDumpHoldsNoSigningKey: with an HMAC subscription (its secret rotated,
// so a previous one is kept too) and an Ed25519 one, deliveries verify with
// Svix's library and with crypto/ed25519, while pg_dump of the database
// holds no whsec_ or whsk_ secret, nor the bytes of any key that signed
// (in base64 or hex): a stolen dump signs nothing.
func TestDumpHoldsNoSigningKey(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	srv, got := newSignedReceiver(t)
	hmacSub := subscribeSigned(t, e, srv.URL, "dump.hmac", "")
	first := fmtString(hmacSub["signing_secret"])
	_, rot := call(t, e, http.MethodPost, "/v1/subscriptions/"+fmtString(hmacSub["id"])+"/secret/rotate", "")
	current := fmtString(rot["signing_secret"])
	r := deliverOne(t, e, got, "dump.hmac", "dump-1")
	if verifyWithSvix(t, current, r) != nil || verifyWithSvix(t, first, r) != nil {
		t.Fatalf("Svix refuses a delivery: %q", signatures(r))
	}
	edSub := subscribeSigned(t, e, srv.URL, "dump.ed", "ed25519")
	pub := publicKeyOf(t, e, fmtString(edSub["id"]))
	if r := deliverOne(t, e, got, "dump.ed", "dump-2"); !verifiesV1a(t, pub, r, 0) {
		t.Fatalf("v1a signature %q does not verify", signatures(r))
	}
	private, err := st.RevealSubscription(context.Background(), store.DefaultAccount, fmtString(edSub["id"]))
	if err != nil {
		t.Fatal(err)
	}
	dump := testenv.Dump(t, st)
	if !strings.Contains(dump, fmtString(edSub["id"])) {
		t.Fatal("the dump does not hold the subscriptions")
	}
	for _, s := range signingKeyForms(t, first, current, private.SigningSecret) {
		if strings.Contains(dump, s) {
			t.Fatalf("the dump holds signing key material (%.12s…)", s)
		}
	}
}

// signingKeyForms are the strings a dump holding one of the secrets would
// contain: the prefixes, each secret's text after its prefix, and the bytes
// of the key it decodes to in base64 and hex.
func signingKeyForms(t *testing.T, secrets ...string) []string {
	t.Helper()
	forms := []string{"whsec_", store.SecretKeyPrefix}
	for _, s := range secrets {
		text := s[strings.IndexByte(s, '_')+1:]
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			t.Fatalf("secret is not base64: %v", err)
		}
		forms = append(forms, text, hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw[:24]))
	}
	return forms
}
