package testenv

import (
	"sync"

	"github.com/hookrelay/hookrelay/secrets"
)

// keys is the test binary's key ring, made on first use.
var keys struct {
	once sync.Once
	text string
	ring *secrets.Ring
}

// EncryptionKeys is the key ring that every store testenv opens seals
// stored secrets with, as HOOKRELAY_ENCRYPTION_KEYS reads it: one new key
// per test binary, for the hookrelay processes a test runs.
func EncryptionKeys() string {
	keys.once.Do(func() {
		k, err := secrets.NewKey()
		if err == nil {
			keys.ring, err = secrets.ParseRing(k)
		}
		if err != nil {
			panic("testenv: encryption key: " + err.Error())
		}
		keys.text = k
	})
	return keys.text
}

// Keys is EncryptionKeys' ring.
func Keys() *secrets.Ring {
	EncryptionKeys()
	return keys.ring
}
