package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hookrelay/hookrelay/secrets"
	"github.com/hookrelay/hookrelay/store"
)

// secretsCmd is `hookrelay secrets status|rotate|decrypt|new-key`.
type secretsCmd struct {
	Status  secretsStatusCmd  `cmd:"" default:"1" help:"Count the stored secrets per key id (the default)."`
	Rotate  secretsRotateCmd  `cmd:"" help:"Re-encrypt every stored secret under the first key of the ring, in batches, while hookrelay runs."`
	Decrypt secretsDecryptCmd `cmd:"" help:"Write every stored secret back in plain text, before a downgrade (hookrelay stopped)."`
	NewKey  secretsNewKeyCmd  `cmd:"" name:"new-key" help:"Print a new random encryption key."`
}

type secretsStatusCmd struct{}

// Run prints the counts.
func (secretsStatusCmd) Run(e *session) error {
	return e.withSecretsStore(func(ctx context.Context, a *app, st *store.Store) error {
		_, err := a.secretsStatus(ctx, st)
		return err
	})
}

type secretsRotateCmd struct{}

// Run reseals every secret under the ring's first key.
func (secretsRotateCmd) Run(e *session) error {
	return e.reseal(store.SealAll, func(res store.Resealed, st *store.Store) string {
		return fmt.Sprintf("re-encrypted %d secrets under key %s", res.Rewritten, st.Keys().Primary())
	})
}

type secretsDecryptCmd struct{}

// Run writes every secret back in plain text.
func (secretsDecryptCmd) Run(e *session) error {
	return e.reseal(store.Unseal, func(res store.Resealed, _ *store.Store) string {
		return fmt.Sprintf("decrypted %d secrets: they are stored in plain text now", res.Rewritten)
	})
}

// withSecretsStore runs f with the database opened by secretsStore, and
// closes it after.
func (e *session) withSecretsStore(f func(ctx context.Context, a *app, st *store.Store) error) error {
	return e.withApp(func(a *app, ctx context.Context) error {
		st, err := a.secretsStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		return f(ctx, a, st)
	})
}

// reseal rewrites every secret in mode, prints what said makes of the
// result, then what did not decrypt and the status (afterReseal).
func (e *session) reseal(mode store.ResealMode, said func(store.Resealed, *store.Store) string) error {
	return e.withSecretsStore(func(ctx context.Context, a *app, st *store.Store) error {
		res, err := st.Reseal(ctx, mode)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, said(res, st))
		return a.afterReseal(ctx, st, res)
	})
}

type secretsNewKeyCmd struct{}

// Run prints a new key.
func (secretsNewKeyCmd) Run(e *session) error {
	k, err := secrets.NewKey()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, k)
	return nil
}

// secretsStore opens the database (migrated) with the configured key ring.
func (a *app) secretsStore(ctx context.Context) (*store.Store, error) {
	if a.cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	if a.cfg.Encryption.Keys == nil {
		return nil, errNoEncryptionKey
	}
	st, err := store.Open(ctx, a.cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	st.UseKeys(a.cfg.Encryption.Keys)
	if err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// afterReseal reports the secrets that did not open, then the status.
func (a *app) afterReseal(ctx context.Context, st *store.Store, res store.Resealed) error {
	for _, f := range res.Failed {
		fmt.Fprintf(a.stdout, "did not decrypt: %s\n", f)
	}
	if _, err := a.secretsStatus(ctx, st); err != nil {
		return err
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("%d secrets did not decrypt with this key ring", len(res.Failed))
	}
	return nil
}

// secretsStatus prints the counts per column and key id, and what may be
// done with the ring's other keys; it returns the counts.
func (a *app) secretsStatus(ctx context.Context, st *store.Store) ([]store.KeyCount, error) {
	counts, err := st.SecretCounts(ctx)
	if err != nil {
		return nil, err
	}
	ring := st.Keys()
	fmt.Fprintf(a.stdout, "key ring (%s): %s encrypts", a.cfg.Encryption.Source, ring.Primary())
	if ids := ring.IDs()[1:]; len(ids) > 0 {
		fmt.Fprintf(a.stdout, "; %s decrypt", strings.Join(ids, ", "))
	}
	fmt.Fprintln(a.stdout)
	printCounts(a.stdout, counts, ring)
	fmt.Fprintln(a.stdout, verdict(counts, ring))
	return counts, nil
}

// printCounts prints one line per column and key id.
func printCounts(out io.Writer, counts []store.KeyCount, ring *secrets.Ring) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "COLUMN\tKEY ID\tSECRETS")
	for _, c := range counts {
		id := c.KeyID
		switch {
		case id == "":
			id = "(plain text)"
		case !slices.Contains(ring.IDs(), id):
			id += " (not in this ring)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\n", c.Column, id, c.Count)
	}
	_ = w.Flush()
}

// verdict says whether every secret is under the ring's first key, and so
// whether its other keys may be removed.
func verdict(counts []store.KeyCount, ring *secrets.Ring) string {
	var total, other int64
	for _, c := range counts {
		total += c.Count
		if c.KeyID != ring.Primary() {
			other += c.Count
		}
	}
	if other > 0 {
		return fmt.Sprintf("%d of %d secrets are not under %s: run `hookrelay secrets rotate`", other, total, ring.Primary())
	}
	msg := fmt.Sprintf("all %d secrets are under %s", total, ring.Primary())
	if len(ring.IDs()) > 1 {
		msg += "; the other keys may be removed from the ring once every hookrelay process runs with " +
			ring.Primary() + " first (a process whose ring starts with an old key still encrypts under it)"
	}
	return msg
}
