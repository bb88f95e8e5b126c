package config

import (
	"fmt"
	"os"

	"github.com/hookrelay/hookrelay/secrets"
)

// Environment variables of the key ring that encrypts stored secrets
// (docs/security.md#secrets-at-rest).
const (
	EnvEncryptionKeys     = "HOOKRELAY_ENCRYPTION_KEYS"
	EnvEncryptionKeysFile = "HOOKRELAY_ENCRYPTION_KEYS_FILE"
)

// Encryption is the key ring stored secrets are sealed and opened with.
type Encryption struct {
	// Keys is the ring from HOOKRELAY_ENCRYPTION_KEYS, or from the file
	// HOOKRELAY_ENCRYPTION_KEYS_FILE names (a Kubernetes secret); nil when
	// neither is set.
	Keys *secrets.Ring
	// Source names where Keys came from, for messages.
	Source string
}

func (c *Config) loadEncryption(getenv func(string) string) error {
	text, file := getenv(EnvEncryptionKeys), getenv(EnvEncryptionKeysFile)
	source := EnvEncryptionKeys
	switch {
	case text != "" && file != "":
		return fmt.Errorf("config: set %s or %s, not both", EnvEncryptionKeys, EnvEncryptionKeysFile)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("config: %s: %w", EnvEncryptionKeysFile, err)
		}
		text, source = string(b), file
	}
	ring, err := secrets.ParseRing(text)
	if err != nil {
		return fmt.Errorf("config: %s: %w", source, err)
	}
	c.Encryption = Encryption{Keys: ring, Source: source}
	return nil
}
