package secrets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/secrets"
)

func newRing(t *testing.T, keys ...string) *secrets.Ring {
	t.Helper()
	r, err := secrets.ParseRing(strings.Join(keys, ","))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSealOpen: a secret sealed for a row opens for that row, and its
// ciphertext holds neither the secret nor the key.
func TestSealOpen(t *testing.T) {
	k := newKey(t)
	r := newRing(t, k)
	s, err := r.Seal("whsec_abc", "sub_1")
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID != r.Primary() || strings.Contains(s.Text, "whsec_") || strings.Contains(s.Text, k) {
		t.Fatalf("sealed = %+v", s)
	}
	for range 2 { // the second from the cache
		got, err := r.Open(s, "sub_1")
		if err != nil || got != "whsec_abc" {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
	again, _ := r.Seal("whsec_abc", "sub_1")
	if again.Text == s.Text {
		t.Fatal("two seals of one secret gave one ciphertext")
	}
}

// TestOpenOtherRow: a ciphertext copied to another row does not open there,
// and the error names neither the secret nor the key.
func TestOpenOtherRow(t *testing.T) {
	k := newKey(t)
	r := newRing(t, k)
	s, _ := r.Seal("whsec_abc", "sub_1")
	if _, err := r.Open(s, "sub_1"); err != nil { // cached for sub_1 only
		t.Fatal(err)
	}
	_, err := r.Open(s, "sub_2")
	if !errors.Is(err, secrets.ErrOpen) {
		t.Fatalf("Open for another row: %v, want ErrOpen", err)
	}
	if strings.Contains(err.Error(), "whsec_abc") || strings.Contains(err.Error(), k) {
		t.Fatalf("error shows the secret or key: %v", err)
	}
	s.Text = s.Text[:len(s.Text)-2] + "AA"
	if _, err := r.Open(s, "sub_1"); !errors.Is(err, secrets.ErrOpen) {
		t.Fatalf("Open of an altered ciphertext: %v, want ErrOpen", err)
	}
}

// TestRingRotation: a ring seals with its first key and opens under all;
// a key it lacks is ErrUnknownKey; plain text (no key id) opens as is.
func TestRingRotation(t *testing.T) {
	oldKey, newK := newKey(t), newKey(t)
	old := newRing(t, oldKey)
	s, _ := old.Seal("whsk_x", "sub_1")
	both := newRing(t, newK, oldKey)
	if both.Primary() == old.Primary() || both.IDs()[1] != old.Primary() {
		t.Fatalf("ids: %v, old %s", both.IDs(), old.Primary())
	}
	if got, err := both.Open(s, "sub_1"); err != nil || got != "whsk_x" {
		t.Fatalf("Open under the old key: %q, %v", got, err)
	}
	resealed, _ := both.Seal("whsk_x", "sub_1")
	if resealed.KeyID != both.Primary() {
		t.Fatalf("sealed under %s, want %s", resealed.KeyID, both.Primary())
	}
	if _, err := newRing(t, newK).Open(s, "sub_1"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("Open without the old key: %v, want ErrUnknownKey", err)
	}
	if got, err := both.Open(secrets.Sealed{Text: "whsec_plain"}, "sub_1"); err != nil || got != "whsec_plain" {
		t.Fatalf("Open of plain text: %q, %v", got, err)
	}
	var none *secrets.Ring
	if _, err := none.Seal("x", "sub_1"); !errors.Is(err, secrets.ErrNoKeys) {
		t.Fatalf("Seal without keys: %v", err)
	}
}

// TestParseRing: separators, a bad key (the error shows no key material), a
// key listed twice, an empty ring.
func TestParseRing(t *testing.T) {
	a, b := newKey(t), newKey(t)
	r := newRing(t, a+"\n "+b+"\n")
	if len(r.IDs()) != 2 || r.IDs()[0] == r.IDs()[1] {
		t.Fatalf("ids %v", r.IDs())
	}
	if again := newRing(t, a); again.Primary() != r.Primary() {
		t.Fatal("a key's id changed between parses")
	}
	short := "c2hvcnQ="
	if _, err := secrets.ParseRing(a + "," + short); err == nil || strings.Contains(err.Error(), short) || !strings.Contains(err.Error(), "key 2 of 2") {
		t.Fatalf("short key: %v", err)
	}
	if _, err := secrets.ParseRing(a + "," + a); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate key: %v", err)
	}
	if r, err := secrets.ParseRing(" \n"); r != nil || err != nil {
		t.Fatalf("empty ring: %v, %v", r, err)
	}
}
