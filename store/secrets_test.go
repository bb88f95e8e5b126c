package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/secrets"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// subscribe stores a subscription of scheme to typ and returns it, with its
// new secret in plain text.
func subscribe(t *testing.T, st *store.Store, typ, scheme string) store.Subscription {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "https://a.example/" + typ,
		EventTypes: []string{typ}, Policy: "workfront", Active: true, SignatureScheme: scheme}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

// ring parses keys or fails the test.
func ring(t *testing.T, keys ...string) *secrets.Ring {
	t.Helper()
	r, err := secrets.ParseRing(strings.Join(keys, ","))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// storedSecrets is what the subscriptions table holds of the secrets.
func storedSecrets(t *testing.T, st *store.Store) string {
	t.Helper()
	var all []string
	err := st.DB().Select(&all, `SELECT signing_secret || ' ' || signing_secret_key || ' ' ||
		previous_signing_secret || ' ' || previous_signing_secret_key FROM subscriptions`)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(all, "\n")
}

// TestSecretsSealedAtRest: a new HMAC secret and a new Ed25519 key, and a
// rotation's previous secret, are stored sealed under the ring's first key;
// the creation and reveal give them back, and a delivery's target signs
// with them.
func TestSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	hmac, ed := subscribe(t, st, "sealed.hmac", store.SchemeHMAC), subscribe(t, st, "sealed.ed", store.SchemeEd25519)
	if !strings.HasPrefix(hmac.SigningSecret, "whsec_") || !strings.HasPrefix(ed.SigningSecret, store.SecretKeyPrefix) {
		t.Fatalf("new secrets %q, %q", hmac.SigningSecret[:6], ed.SigningSecret[:5])
	}
	rotated, err := st.RotateSigningKey(ctx, store.DefaultAccount, hmac.ID, "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stored := storedSecrets(t, st)
	for _, plain := range []string{"whsec_", store.SecretKeyPrefix, hmac.SigningSecret[6:], ed.SigningSecret[5:]} {
		if strings.Contains(stored, plain) {
			t.Fatalf("the table holds a secret in plain text (%.10s…)", plain)
		}
	}
	if !strings.Contains(stored, testenv.Keys().Primary()) {
		t.Fatal("no key id beside the ciphertexts")
	}
	got, err := st.RevealSubscription(ctx, store.DefaultAccount, hmac.ID)
	if err != nil || got.SigningSecret != rotated.SigningSecret {
		t.Fatalf("reveal: %v", err)
	}
	res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "sealed.hmac", Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	target, err := st.Target(ctx, res.Deliveries[0].ID)
	if err != nil || target.SigningSecret != rotated.SigningSecret || target.PreviousSigningSecret != hmac.SigningSecret {
		t.Fatalf("target's secrets are not the current and previous ones (%v)", err)
	}
}

// TestCopiedCiphertextFails: a subscription's sealed secret copied onto
// another subscription's row does not open there: its target is an error
// naming the subscription, never a wrong key, and publishing still works.
func TestCopiedCiphertextFails(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	a, b := subscribe(t, st, "copied.a", store.SchemeHMAC), subscribe(t, st, "copied.b", store.SchemeHMAC)
	copySecret(t, st, a.ID, b.ID)
	res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "copied.b", Data: store.RawJSON(`{}`)})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish: %v", err)
	}
	_, err = st.Target(ctx, res.Deliveries[0].ID)
	if !errors.Is(err, secrets.ErrOpen) || !strings.Contains(err.Error(), b.ID) {
		t.Fatalf("target of the copied secret: %v, want ErrOpen naming %s", err, b.ID)
	}
	if strings.Contains(err.Error(), a.SigningSecret) {
		t.Fatal("the error shows the secret")
	}
	if _, err := st.RevealSubscription(ctx, store.DefaultAccount, b.ID); !errors.Is(err, secrets.ErrOpen) {
		t.Fatalf("reveal of the copied secret: %v", err)
	}
}

// copySecret copies the sealed signing secret of subscription from onto to.
func copySecret(t *testing.T, st *store.Store, from, to string) {
	t.Helper()
	_, err := st.DB().Exec(`UPDATE subscriptions b SET signing_secret = a.signing_secret,
		signing_secret_key = a.signing_secret_key FROM subscriptions a WHERE a.id = $1 AND b.id = $2`, from, to)
	if err != nil {
		t.Fatal(err)
	}
}

// TestResealRotatesAndDecrypts: a plain-text secret (from before
// encryption) is sealed at start (SealPlain); a rotation to a new first key
// reseals every secret under it, after which a ring without the old key
// opens them all; one that does not open is reported and left alone; and
// Unseal writes them back in plain text for a downgrade.
func TestResealRotatesAndDecrypts(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	subs := []store.Subscription{subscribe(t, st, "reseal.a", store.SchemeHMAC), subscribe(t, st, "reseal.b", store.SchemeEd25519)}
	if _, err := st.DB().Exec(`UPDATE subscriptions SET signing_secret = 'whsec_0123', signing_secret_key = '' WHERE id = $1`, subs[0].ID); err != nil {
		t.Fatal(err)
	}
	subs[0].SigningSecret = "whsec_0123"
	old := testenv.Keys().Primary()
	if res, err := st.Reseal(ctx, store.SealPlain); err != nil || res.Rewritten != 1 {
		t.Fatalf("seal plain: %+v, %v", res, err)
	}
	assertCounts(t, st, map[string]int64{old: 2})
	newKey, _ := secrets.NewKey()
	st.UseKeys(ring(t, newKey, testenv.EncryptionKeys()))
	if res, err := st.Reseal(ctx, store.SealAll); err != nil || res.Rewritten != 2 || len(res.Failed) != 0 {
		t.Fatalf("rotate: %+v, %v", res, err)
	}
	st.UseKeys(ring(t, newKey))
	assertCounts(t, st, map[string]int64{st.Keys().Primary(): 2})
	assertSecrets(t, st, subs)
	bad := subscribe(t, st, "reseal.bad", store.SchemeHMAC)
	copySecret(t, st, subs[0].ID, bad.ID)
	res, err := st.Reseal(ctx, store.Unseal)
	if err != nil || res.Rewritten != 2 || !slices.Equal(res.Failed, []string{"subscriptions.signing_secret " + bad.ID}) {
		t.Fatalf("unseal: %+v, %v", res, err)
	}
	assertCounts(t, st, map[string]int64{"": 2, st.Keys().Primary(): 1})
	st.UseKeys(nil)
	assertSecrets(t, st, subs)
}

// assertCounts checks SecretCounts (the signing secrets) against want.
func assertCounts(t *testing.T, st *store.Store, want map[string]int64) {
	t.Helper()
	counts, err := st.SecretCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range counts {
		if c.Column == "subscriptions.signing_secret" {
			got[c.KeyID] = c.Count
		}
	}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("counts %v, want %v", got, want)
		}
	}
}

// assertSecrets checks that each of subs reveals its secret.
func assertSecrets(t *testing.T, st *store.Store, subs []store.Subscription) {
	t.Helper()
	for _, s := range subs {
		got, err := st.RevealSubscription(context.Background(), store.DefaultAccount, s.ID)
		if err != nil || got.SigningSecret != s.SigningSecret {
			t.Fatalf("%s does not reveal its secret (%v)", s.ID, err)
		}
	}
}

// TestDowngrade: docs/security.md#downgrading. Undoing migration 00022 is
// refused while a secret is encrypted; after Unseal it restores the
// plain-text column default an older hookrelay needs, and upgrading again
// seals the secrets at start.
func TestDowngrade(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	sub := subscribe(t, st, "downgrade", store.SchemeHMAC)
	if err := st.MigrateDownTo(ctx, 21); err == nil || !strings.Contains(err.Error(), "hookrelay secrets decrypt") {
		t.Fatalf("down with encrypted secrets: %v", err)
	}
	if _, err := st.Reseal(ctx, store.Unseal); err != nil {
		t.Fatal(err)
	}
	if err := st.MigrateDownTo(ctx, 21); err != nil {
		t.Fatal(err)
	}
	var def string
	err := st.DB().Get(&def, `SELECT column_default FROM information_schema.columns
		WHERE table_name = 'subscriptions' AND column_name = 'signing_secret'`)
	if err != nil || !strings.Contains(def, "whsec_") {
		t.Fatalf("signing_secret's default after the downgrade: %q (%v)", def, err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := st.Reseal(ctx, store.SealPlain); err != nil || res.Rewritten != 1 {
		t.Fatalf("seal after the upgrade: %+v, %v", res, err)
	}
	assertSecrets(t, st, []store.Subscription{sub})
}
