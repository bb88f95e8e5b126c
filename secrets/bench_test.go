package secrets_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/secrets"
)

// BenchmarkOpen is what a delivery's target pays to open its secret: from
// the cache (every attempt after a process's first for that secret).
func BenchmarkOpen(b *testing.B) {
	k, _ := secrets.NewKey()
	r, _ := secrets.ParseRing(k)
	s, _ := r.Seal("whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab", "sub_0123456789abcdef0123")
	for b.Loop() {
		if _, err := r.Open(s, "sub_0123456789abcdef0123"); err != nil {
			b.Fatal(err)
		}
	}
}
