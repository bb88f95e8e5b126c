package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/secrets"
	"github.com/hookrelay/hookrelay/store"
)

// errNoEncryptionKey stops the servers that would store or use secrets
// without a key to seal them with.
var errNoEncryptionKey = fmt.Errorf("no encryption key for stored secrets: set %s to a key ring "+
	"(make a key with `hookrelay secrets new-key` or `openssl rand -base64 32`), or %s to a file holding it "+
	"(docs/security.md#secrets-at-rest)", config.EnvEncryptionKeys, config.EnvEncryptionKeysFile)

// devKeyFile is the file in the data dir where `hookrelay dev` keeps the key
// it made when none is configured.
const devKeyFile = "encryption.key"

// useKeys gives st the configured key ring, refusing to go on without one,
// and seals any secret still stored in plain text (from before encryption,
// or from an older hookrelay running beside this one).
func (a *app) useKeys(ctx context.Context, st *store.Store) error {
	if a.cfg.Encryption.Keys == nil {
		return errNoEncryptionKey
	}
	st.UseKeys(a.cfg.Encryption.Keys)
	return a.sealPlain(ctx, st)
}

// sealPlain seals the secrets st holds in plain text, saying how many.
func (a *app) sealPlain(ctx context.Context, st *store.Store) error {
	res, err := st.Reseal(ctx, store.SealPlain)
	if err != nil {
		return err
	}
	if res.Rewritten > 0 {
		a.logger.InfoContext(ctx, "secrets_sealed", "count", res.Rewritten, "key_id", st.Keys().Primary())
	}
	if len(res.Failed) > 0 {
		a.logger.WarnContext(ctx, "secrets_not_sealed", "count", len(res.Failed), "rows", strings.Join(res.Failed, ", "))
	}
	return nil
}

// devKeys gives `hookrelay dev` a key ring when none is configured: the key
// kept in dataDir, made on its first run.
func (a *app) devKeys(dataDir string) error {
	if a.cfg.Encryption.Keys != nil {
		return nil
	}
	path := filepath.Join(dataDir, devKeyFile)
	text, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k, kerr := secrets.NewKey()
		if kerr != nil {
			return kerr
		}
		text, err = []byte(k+"\n"), os.WriteFile(path, []byte(k+"\n"), 0o600)
	}
	if err != nil {
		return fmt.Errorf("dev encryption key: %w", err)
	}
	ring, err := secrets.ParseRing(string(text))
	if err == nil && ring == nil {
		err = errors.New("the file is empty")
	}
	if err != nil {
		return fmt.Errorf("dev encryption key %s: %w", path, err)
	}
	a.cfg.Encryption = config.Encryption{Keys: ring, Source: path}
	return nil
}
